/**
 * What a new user meets in their first hour with the API (issue 13): no Node warning on streamed
 * runs, a DELETE that is final when it answers, and errors that name what they refer to.
 */
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { Thread } from '../../common/thread';
import { apiHarness, call, freePort, userInput, waitRun } from '../helpers/api';
import { readSse } from '../helpers/sse';
import { startWorkerProcess } from '../helpers/worker-process';
import { workflowIdFor } from '../../common/thread';

jest.setTimeout(120_000);

describe('the API in the first hour', () => {
  const harness = apiHarness();

  const newThread = async (body: Record<string, unknown> = {}): Promise<string> => {
    const response = await call<Thread>(harness.base, 'POST', '/threads', body);
    expect(response.status).toBe(200);
    return response.body.thread_id;
  };

  it('streams many runs, and follows a thread throughout, without a MaxListenersExceededWarning', async () => {
    // Node prints the warning on the API process's stderr, as `npm start` showed it.
    const apiProcess = await startWorkerProcess({
      command: 'api',
      env: {
        KEEL_TASK_QUEUE: harness.config.taskQueue,
        KEEL_DATA_DIR: harness.config.dataDir,
        KEEL_MODEL: 'scripted:demo',
        KEEL_API_PORT: String(await freePort()),
      },
    });
    try {
      const ready = apiProcess.logs.find((line) => line.msg === 'api ready')!;
      const base = ready.url as string;
      const created = await call<Thread>(base, 'POST', '/threads', {
        config: { model: 'scripted:typewriter' },
      });
      const threadId = created.body.thread_id;
      let finishedRuns = 0;
      const followed = readSse(
        `${base}/threads/${threadId}/stream`,
        {},
        (event) => event.event === 'run.completed' && ++finishedRuns === 4,
      );
      for (let index = 0; index < 3; index++) {
        const streamed = await readSse(`${base}/threads/${threadId}/runs/stream`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          // Keel's own events (message.delta per batch of text), as `keel chat` reads them.
          body: JSON.stringify(userInput(`run ${index}: ${'word '.repeat(120)}`, { stream_mode: 'keel' })),
        });
        // Each batch of text is a poll of the thread's stream: more than ten calls per request.
        expect(streamed.events.filter((event) => event.event === 'message.delta').length).toBeGreaterThan(12);
        expect(streamed.events.at(-1)?.event).toBe('end');
      }
      const waited = await waitRun(base, threadId, userInput('waited'), 'timeout_s=60');
      expect(waited.status).toBe(200);
      // More waits at once than Node's default listener limit: each listens for the API's stop.
      const waits = await Promise.all(
        Array.from({ length: 12 }, async () => {
          const thread = await call<Thread>(base, 'POST', '/threads', {});
          return waitRun(base, thread.body.thread_id, userInput('think: 1\nhello'), 'timeout_s=60');
        }),
      );
      expect(waits.map((answer) => answer.status)).toEqual(Array.from({ length: 12 }, () => 200));
      expect((await followed).events.filter((event) => event.event === 'run.completed')).toHaveLength(4);
      expect(apiProcess.output.filter((line) => line.includes('Warning'))).toEqual([]);
    } finally {
      apiProcess.kill('SIGTERM');
      await apiProcess.exited;
    }
  });

  it('names the thread a request could not find', async () => {
    const missing = `missing-${randomUUID()}`;
    for (const [method, path] of [
      ['GET', `/threads/${missing}`],
      ['GET', `/threads/${missing}/state`],
      ['GET', `/threads/${missing}/runs`],
      ['POST', `/threads/${missing}/runs`],
      ['DELETE', `/threads/${missing}`],
    ] as const) {
      const response = await call<{ error: { code: string; message: string } }>(
        harness.base,
        method,
        path,
        method === 'POST' ? userInput('hello') : undefined,
      );
      expect({ method, path, status: response.status, error: response.body.error }).toEqual({
        method,
        path,
        status: 404,
        error: expect.objectContaining({
          code: 'thread_not_found',
          message: `thread ${missing} not found`,
        }),
      });
    }
  });

  it('deletes a thread for good the moment DELETE answers: 404 on every read, no run, the id free again', async () => {
    const threadId = `deleted-${randomUUID()}`;
    await newThread({ thread_id: threadId, metadata: { first_hour: threadId } });
    expect(
      (await call(harness.base, 'POST', `/threads/${threadId}/runs/wait`, userInput('before-deletion')))
        .status,
    ).toBe(200);
    // A run in progress does not hold the deletion up, and a reader of the thread's stream is told.
    await call(harness.base, 'POST', `/threads/${threadId}/runs`, userInput('think: 30'));
    const following = readSse(`${harness.base}/threads/${threadId}/stream`);

    const deleted = await call(harness.base, 'DELETE', `/threads/${threadId}`);
    expect(deleted).toMatchObject({ status: 200, body: { thread_id: threadId, deleted: true } });
    expect((await following).events.at(-1)?.event).toBe('end');
    for (const [method, path] of [
      ['GET', `/threads/${threadId}`],
      ['GET', `/threads/${threadId}/state`],
      ['GET', `/threads/${threadId}/runs`],
      ['GET', `/threads/${threadId}/approvals`],
      ['POST', `/threads/${threadId}/runs`],
      ['POST', `/threads/${threadId}/runs/wait`],
      ['DELETE', `/threads/${threadId}`],
    ] as const) {
      const response = await call<{ error: { code: string; message: string } }>(
        harness.base,
        method,
        path,
        method === 'POST' ? userInput('still there?') : undefined,
      );
      expect({ method, path, status: response.status, code: response.body.error?.code }).toEqual({
        method,
        path,
        status: 404,
        code: 'thread_not_found',
      });
      expect(response.body.error.message).toBe(`thread ${threadId} not found`);
    }
    const search = await call<Array<{ thread_id: string }>>(harness.base, 'POST', '/threads/search', {
      metadata: { first_hour: threadId },
    });
    expect(search.body).toEqual([]);

    // The id is free: a new, empty thread takes it, and it works.
    const again = await call<Thread>(harness.base, 'POST', '/threads', { thread_id: threadId });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ thread_id: threadId, status: 'idle', messages_count: 0 });
    const answered = await waitRun(harness.base, threadId, userInput('new life'));
    expect(answered.status).toBe(200);
    expect(JSON.stringify(answered.body)).not.toContain('before-deletion');
    const state = await call<{ values: { messages: unknown[] } }>(
      harness.base,
      'GET',
      `/threads/${threadId}/state`,
    );
    expect(state.body.values.messages).toHaveLength(2);
  });

  it('deletes a thread that had already closed for good the moment DELETE answers', async () => {
    const threadId = await newThread();
    const handle = harness.client.workflow.getHandle(workflowIdFor(threadId));
    await handle.signal('close', {});
    await handle.result();
    expect((await call<Thread>(harness.base, 'GET', `/threads/${threadId}`)).body.status).toBe('closed');
    expect((await call(harness.base, 'DELETE', `/threads/${threadId}`)).status).toBe(200);
    for (const path of ['', '/state', '/runs', '/history']) {
      const method = path === '/history' ? 'POST' : 'GET';
      const read = await call(
        harness.base,
        method,
        `/threads/${threadId}${path}`,
        method === 'POST' ? {} : undefined,
      );
      expect({ path, status: read.status }).toEqual({ path, status: 404 });
    }
    expect((await call(harness.base, 'DELETE', `/threads/${threadId}`)).status).toBe(404);
    const again = await call<Thread>(harness.base, 'POST', '/threads', { thread_id: threadId });
    expect(again.body).toMatchObject({ thread_id: threadId, status: 'idle', messages_count: 0 });
    expect(
      (await call(harness.base, 'POST', `/threads/${threadId}/runs/wait`, userInput('reborn'))).status,
    ).toBe(200);
  }, 60_000);

  it('reads a body sent as application/json (with a charset too), and refuses any other type with 415 saying so', async () => {
    for (const contentType of ['application/json', 'application/json; charset=utf-8', 'Application/JSON']) {
      const threadId = `typed-${randomUUID()}`;
      const response = await rawPost(
        harness.base,
        '/threads',
        JSON.stringify({ thread_id: threadId }),
        contentType,
      );
      expect({ contentType, status: response.status, thread: response.body.thread_id }).toEqual({
        contentType,
        status: 200,
        thread: threadId,
      });
    }
    for (const contentType of [undefined, 'application/x-www-form-urlencoded', 'text/plain']) {
      const response = await rawPost(
        harness.base,
        '/threads',
        JSON.stringify({ thread_id: 'x' }),
        contentType,
      );
      expect({ contentType, status: response.status, error: response.body.error }).toEqual({
        contentType,
        status: 415,
        error: {
          type: 'invalid_request_error',
          code: 'unsupported_media_type',
          message: `request bodies must be JSON sent as "content-type: application/json" (this one's content-type: ${contentType ?? 'none'})`,
        },
      });
    }
    const broken = await rawPost(harness.base, '/threads', 'thread_id=x', 'application/json');
    expect(broken.status).toBe(400);
    expect(broken.body.error).toMatchObject({
      code: 'invalid_json',
      message: 'the request body is not valid JSON (content-type: application/json); send a JSON object',
    });
  });

  it('says what a message without content is missing', async () => {
    const threadId = await newThread();
    const response = await call<{ error: { code: string; message: string; param: string } }>(
      harness.base,
      'POST',
      `/threads/${threadId}/runs`,
      { input: { messages: [{ role: 'user' }] } },
    );
    expect(response.status).toBe(422);
    expect(response.body.error).toMatchObject({
      param: 'input.messages.0.content',
      message:
        'body.input.messages.0.content: missing: each message needs "content", a string or a list of {"type": "text", "text": …} blocks',
    });
  });
});

interface RawBody {
  thread_id?: string;
  error?: { type?: string; code: string; message: string };
}

/** POSTs `body` with exactly the content-type given (none when undefined), as curl or a script might. */
function rawPost(
  base: string,
  path: string,
  body: string,
  contentType: string | undefined,
): Promise<{ status: number; body: RawBody }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${base}${path}`, {
      method: 'POST',
      headers: {
        'content-length': Buffer.byteLength(body),
        ...(contentType === undefined ? {} : { 'content-type': contentType }),
      },
    });
    request.on('error', reject);
    request.on('response', (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as RawBody }),
      );
    });
    request.end(body);
  });
}
