/**
 * What the API refuses at the door, each with the attack that once got through: JSON nested
 * thousands deep (it reached the worker), crons firing every second, and clients that send
 * their request slowly or never finish it (held for as long as they liked, before auth).
 */
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { apiBeside, apiHarness, call, userInput, waitRun } from '../helpers/api';
import { readSse } from '../helpers/sse';
import { testConfig } from '../helpers/temporal';

jest.setTimeout(60_000);

/** `{"a":{"a":…}}` `depth` levels deep around `leaf`. */
function nested(depth: number, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let level = 0; level < depth; level++) value = { a: value };
  return value;
}

/** Writes `head` (and the start of a body) on a raw socket, then sends nothing more. */
function stalledRequest(url: string, head: string): Promise<{ answer: string; afterMs: number }> {
  const { hostname, port } = new URL(url);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(head));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve({ answer, afterMs: Date.now() - started }));
  });
}

describe('the door', () => {
  const harness = apiHarness();

  describe('deeply nested JSON', () => {
    const attack = nested(2_000);

    it('refuses ~10 KB of nested metadata with 400 json_too_deep wherever it is sent', async () => {
      const threadId = (await call<{ thread_id: string }>(harness.base, 'POST', '/threads', {})).body
        .thread_id;
      expect(JSON.stringify({ metadata: attack }).length).toBeGreaterThan(10_000);
      for (const [method, path, body] of [
        ['POST', '/threads', { metadata: attack }],
        ['PATCH', `/threads/${threadId}`, { metadata: attack }],
        ['POST', `/threads/${threadId}/runs/wait`, userInput('hi', { metadata: attack })],
        ['POST', '/assistants', { graph_id: 'agent', metadata: attack }],
        ['POST', '/threads/search', { metadata: attack }],
      ] as const) {
        const answer = await call(harness.base, method, path, body);
        expect({ path, status: answer.status, body: answer.body }).toEqual({
          path,
          status: 400,
          body: {
            error: {
              type: 'invalid_request_error',
              code: 'json_too_deep',
              message: 'the request body nests objects and arrays more than 64 levels deep',
            },
            detail: 'the request body nests objects and arrays more than 64 levels deep',
          },
        });
      }
      // The thread is as it was, and answers.
      const answered = await waitRun(harness.base, threadId, userInput('still here?'));
      expect(answered.status).toBe(200);
    });

    it('takes metadata nested as deep as the limit allows, and the run completes', async () => {
      // The body's own object and `metadata` are two levels; the rest is the metadata's.
      const answered = await call<{ metadata?: unknown }>(
        harness.base,
        'POST',
        '/runs/wait',
        userInput('hello', { metadata: nested(61) }),
      );
      expect(answered.status).toBe(200);
    });
  });

  describe('crons', () => {
    let threadId: string;
    beforeAll(async () => {
      threadId = (await call<{ thread_id: string }>(harness.base, 'POST', '/threads', {})).body.thread_id;
    });

    it.each([
      ['every second (seven fields)', '* * * * * * *', 'it fires on 60 seconds of a minute'],
      ['twice a minute', '0,30 * * * * * *', 'it fires on 2 seconds of a minute'],
      ['@every 1s', '@every 1s', 'it fires every 1 s'],
      ['@every 30s', '@every 30s', 'it fires every 30 s'],
    ])('refuses a schedule firing %s with 422, and keeps no schedule of it', async (_name, schedule, why) => {
      const answer = await call(harness.base, 'POST', `/threads/${threadId}/runs/crons`, {
        assistant_id: 'agent',
        schedule,
        input: { messages: [{ role: 'user', content: 'tick' }] },
      });
      expect(answer.status).toBe(422);
      expect(answer.body).toMatchObject({
        error: {
          code: 'schedule_too_frequent',
          param: 'schedule',
          message: `schedule "${schedule}" fires more often than once a minute (${why}); a cron runs at most every minute, e.g. "* * * * *"`,
        },
      });
      const left = await call<unknown[]>(harness.base, 'POST', '/runs/crons/search', { thread_id: threadId });
      expect(left.body).toEqual([]);
    });

    it.each(['* * * * *', '@every 1m', '0 9 * * 1-5', '30 * * * * * *'])(
      'accepts %s (at most once a minute), enabled, with its next run',
      async (schedule) => {
        const answer = await call<{ cron_id: string; next_run_date: string | null; enabled: boolean }>(
          harness.base,
          'POST',
          `/threads/${threadId}/runs/crons`,
          { assistant_id: 'agent', schedule, input: { messages: [{ role: 'user', content: 'tick' }] } },
        );
        expect(answer.status).toBe(200);
        expect(answer.body.enabled).toBe(true);
        expect(answer.body.next_run_date).toEqual(expect.any(String));
        const [found] = (
          await call<Array<{ cron_id: string; enabled: boolean }>>(
            harness.base,
            'POST',
            '/runs/crons/search',
            {
              thread_id: threadId,
            },
          )
        ).body;
        expect(found).toMatchObject({ cron_id: answer.body.cron_id, enabled: true });
        expect((await call(harness.base, 'DELETE', `/runs/crons/${answer.body.cron_id}`)).status).toBe(204);
      },
    );
  });

  describe('slow clients, with 1 s for headers and 2 s for a whole request (as configured)', () => {
    const api = apiBeside(harness, (config) =>
      testConfig({
        KEEL_TASK_QUEUE: config.taskQueue,
        KEEL_DATA_DIR: config.dataDir,
        KEEL_API_HEADERS_TIMEOUT_MS: '1000',
        KEEL_API_REQUEST_TIMEOUT_MS: '2000',
      }),
    );

    it('answers a body that never finishes with 408 in the error shape, within the timeout', async () => {
      const { answer, afterMs } = await stalledRequest(
        api.url,
        'POST /threads HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"thread_id":',
      );
      expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
        error: {
          type: 'invalid_request_error',
          code: 'request_timeout',
          message: 'the request was not received in time: headers within 1 s, the whole request within 2 s',
        },
        detail: 'the request was not received in time: headers within 1 s, the whole request within 2 s',
      });
      expect(afterMs).toBeGreaterThanOrEqual(1_900);
      expect(afterMs).toBeLessThan(4_500);
    });

    it('answers headers that never finish with 408', async () => {
      const { answer, afterMs } = await stalledRequest(
        api.url,
        'GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ',
      );
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(afterMs).toBeLessThan(3_500);
    });

    it('holds 200 slow bodies no longer than the timeout', async () => {
      const stalled = await Promise.all(
        Array.from({ length: 200 }, () =>
          stalledRequest(
            api.url,
            'POST /threads/cleanup HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
          ),
        ),
      );
      expect(Math.max(...stalled.map(({ afterMs }) => afterMs))).toBeLessThan(5_000);
      expect(stalled.every(({ answer }) => answer.startsWith('HTTP/1.1 408'))).toBe(true);
    });

    it('lets a waited run answer, and a stream go on, long after the request timeout', async () => {
      const threadId = `slow-${randomUUID()}`;
      await call(api.url, 'POST', '/threads', { thread_id: threadId });
      const stream = readSse(
        `${api.url}/threads/${threadId}/stream`,
        {},
        ({ event }) => event === 'run.completed',
      );
      const started = Date.now();
      const answered = await call(api.url, 'POST', `/threads/${threadId}/runs/wait`, userInput('think: 4'));
      expect(answered.status).toBe(200);
      expect(Date.now() - started).toBeGreaterThan(3_500);
      const { events } = await stream;
      expect(events.map(({ event }) => event)).toContain('run.completed');
    });
  });
});
