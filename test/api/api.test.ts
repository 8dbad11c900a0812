import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { RunningApi } from '../../api/server';
import { apiConnectionOptions } from '../../api/gateway/temporal-client';
import type { KeelConfig } from '../../platform/config';
import type { Run } from '../../common/run';
import type { Message } from '../../common/transcript';
import type { LangChainMessage } from '../../api/protocol/langchain-messages';
import { apiHarness, call, startTestApi, userInput, waitRun } from '../helpers/api';
import { eventually, testConfig } from '../helpers/temporal';

type ErrorBody = { error: { type: string; code: string; message: string; param?: string }; detail: string };

function expectError(response: { status: number; body: unknown }, status: number, code: string): ErrorBody {
  expect(response.status).toBe(status);
  const body = response.body as ErrorBody;
  expect(body).toMatchObject({
    error: { code, message: expect.any(String), type: expect.any(String) },
    detail: body.error.message,
  });
  expect(JSON.stringify(body)).not.toMatch(/\bat .+\.ts:\d+/);
  return body;
}

describe('the HTTP API', () => {
  const harness = apiHarness();
  let client: Client;
  let config: KeelConfig;
  let base: string;
  beforeAll(() => {
    ({ client, config, base } = harness);
  });

  const newThread = async (body: Record<string, unknown> = {}): Promise<string> => {
    const response = await call<{ thread_id: string }>(base, 'POST', '/threads', body);
    expect(response.status).toBe(200);
    return response.body.thread_id;
  };

  describe('threads', () => {
    it('creates a thread with the server defaults, readable right away', async () => {
      const created = await call(base, 'POST', '/threads', {
        metadata: { project: 'keel' },
        config: { max_steps: 7 },
      });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({
        status: 'idle',
        metadata: { project: 'keel' },
        config: { model: 'scripted:demo', approval: 'auto', approval_timeout_s: 300, max_steps: 7 },
      });
      const read = await call(base, 'GET', `/threads/${String(created.body.thread_id)}`);
      expect(read.body).toMatchObject({
        thread_id: created.body.thread_id,
        status: 'idle',
        messages_count: 0,
      });
    });

    it('answers 409 thread_exists for a taken id, or the existing thread with if_exists=do_nothing', async () => {
      const threadId = `t-${randomUUID()}`;
      await newThread({ thread_id: threadId, metadata: { first: true } });
      expectError(await call(base, 'POST', '/threads', { thread_id: threadId }), 409, 'thread_exists');
      const again = await call(base, 'POST', '/threads', { thread_id: threadId, if_exists: 'do_nothing' });
      expect(again.body).toMatchObject({ thread_id: threadId, metadata: { first: true } });
    });

    it('creates a thread from an empty POST with no body at all', async () => {
      const response = await fetch(`${base}/threads`, { method: 'POST' });
      expect(response.status).toBe(200);
    });

    it.each([
      ['an id that could be a path', { thread_id: '../etc' }, 'thread_id'],
      ['metadata of the wrong type', { metadata: 'yes' }, 'metadata'],
      ['an unknown model provider', { config: { model: 'gpt:4' } }, 'config.model'],
      ['a negative budget', { config: { max_cost_usd: -1 } }, 'config.max_cost_usd'],
    ])('refuses %s with 422 naming the field', async (_name, body, param) => {
      expect(
        expectError(await call(base, 'POST', '/threads', body), 422, 'validation_error').error.param,
      ).toBe(param);
    });

    it('answers 404 thread_not_found for an unknown or impossible id', async () => {
      expectError(await call(base, 'GET', `/threads/${randomUUID()}`), 404, 'thread_not_found');
      expectError(await call(base, 'GET', '/threads/%2E%2E%2Fx'), 404, 'thread_not_found');
      expectError(await call(base, 'GET', `/threads/${randomUUID()}/state`), 404, 'thread_not_found');
    });
  });

  describe('bodies that are not what they should be', () => {
    it('answers malformed JSON with 400 invalid_json', async () => {
      expectError(await call(base, 'POST', '/threads', '{"thread_id": '), 400, 'invalid_json');
    });

    it('answers a JSON array with 422', async () => {
      expectError(await call(base, 'POST', '/threads', '[1,2]'), 422, 'validation_error');
    });

    it('answers a body over 1 MiB with 413, and the thread is untouched', async () => {
      const threadId = await newThread();
      const huge = userInput('x'.repeat(1_200_000));
      expectError(await call(base, 'POST', `/threads/${threadId}/runs`, huge), 413, 'payload_too_large');
      expect((await call(base, 'GET', `/threads/${threadId}`)).body).toMatchObject({ messages_count: 0 });
    });

    it('answers input over 100,000 characters with 422 from the workflow validator, losing nothing', async () => {
      const threadId = await newThread();
      expectError(
        await call(base, 'POST', `/threads/${threadId}/runs`, userInput('y'.repeat(100_001))),
        422,
        'invalid_input',
      );
      expect((await call(base, 'GET', `/threads/${threadId}`)).body).toMatchObject({
        messages_count: 0,
        summary: { runs: 0 },
      });
    });

    it.each([
      ['an assistant message', { input: { messages: [{ role: 'assistant', content: 'hi' }] } }],
      ['content of the wrong type', { input: { messages: [{ role: 'user', content: 42 }] } }],
      ['a bad multitask strategy', userInput('hi', { multitask_strategy: 'sometimes' })],
      ['a webhook that is not a URL', userInput('hi', { webhook: 'not a url' })],
    ])('refuses a run with %s (422)', async (_name, body) => {
      const threadId = await newThread();
      expectError(await call(base, 'POST', `/threads/${threadId}/runs`, body), 422, 'validation_error');
    });

    it.each([
      ['no input', {}],
      ['no messages', { input: { messages: [] } }],
      ['a graph input without messages', { input: { message: 'hi' } }],
    ])(
      'takes a run with %s as one with nothing new: completed at once, no message (decision 0381)',
      async (_name, body) => {
        const threadId = await newThread();
        const response = await waitRun<{ messages: unknown[] }>(base, threadId, body);
        expect(response.status).toBe(200);
        expect(response.body.messages).toEqual([]);
        const [run] = (await call<Array<{ status: string }>>(base, 'GET', `/threads/${threadId}/runs`)).body;
        expect(run?.status).toBe('completed');
        expect((await call(base, 'GET', `/threads/${threadId}`)).body).toMatchObject({ messages_count: 0 });
      },
    );

    it('refuses whitespace-only input with 422 invalid_input', async () => {
      const threadId = await newThread();
      expectError(
        await call(base, 'POST', `/threads/${threadId}/runs`, userInput('   ')),
        422,
        'invalid_input',
      );
    });

    it('answers an unknown route with 404 in the error shape', async () => {
      expectError(await call(base, 'GET', '/nothing/here'), 404, 'route_not_found');
    });
  });

  describe('runs', () => {
    it("waits for a run and answers with the thread's messages, including the command's real output", async () => {
      const threadId = await newThread();
      const response = await waitRun<{ messages: LangChainMessage[] }>(
        base,
        threadId,
        userInput('run: echo "keel says hi"'),
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('content-location')).toMatch(
        new RegExp(`^/threads/${threadId}/runs/[0-9a-f-]+$`),
      );
      const messages = response.body.messages;
      expect(messages.map((message) => message.type)).toEqual(['human', 'ai', 'tool', 'ai']);
      expect(JSON.stringify(messages.at(-1))).toContain('keel says hi');
      const run = await call<Run>(base, 'GET', response.headers.get('content-location')!);
      expect(run.body).toMatchObject({ status: 'completed', thread_id: threadId, steps: 2 });
      const state = await call<{ values: { messages: LangChainMessage[] }; next: string[] }>(
        base,
        'GET',
        `/threads/${threadId}/state`,
      );
      expect(state.body.values.messages).toEqual(messages);
      expect(state.body.next).toEqual([]);
    });

    it('accepts LangGraph-style messages ({type: "human"}, content blocks)', async () => {
      const threadId = await newThread();
      const body = {
        assistant_id: 'agent',
        input: { messages: [{ type: 'human', content: [{ type: 'text', text: 'hello in blocks' }] }] },
      };
      const response = await waitRun<{ messages: Message[] }>(base, threadId, body);
      expect(response.status).toBe(200);
      expect(JSON.stringify(response.body.messages.at(-1))).toContain('hello in blocks');
    });

    it('answers 202 with the run deferred when the wait times out, and the run completes anyway', async () => {
      const threadId = await newThread();
      const response = await waitRun<Run>(
        base,
        threadId,
        userInput('think: 2\nrun: echo finished later'),
        'timeout_s=0.5',
      );
      expect(response.status).toBe(202);
      expect(response.body).toMatchObject({ status: 'deferred', thread_id: threadId });
      expect(response.headers.get('location')).toBe(`/threads/${threadId}/runs/${response.body.run_id}`);
      const done = await eventually(async () => {
        const run = await call<Run>(base, 'GET', `/threads/${threadId}/runs/${response.body.run_id}`);
        return run.body.status === 'completed' ? run.body : undefined;
      });
      expect(done.output).toContain('finished later');
    });

    it('joins a running run, and answers 202 deferred when the join times out', async () => {
      const threadId = await newThread();
      const created = await call<Run>(
        base,
        'POST',
        `/threads/${threadId}/runs`,
        userInput('think: 1.5\nrun: echo joined'),
      );
      expect(created.body.status).toBe('running');
      const early = await call<Run>(
        base,
        'GET',
        `/threads/${threadId}/runs/${created.body.run_id}/join?timeout_s=0.2`,
      );
      expect(early.status).toBe(202);
      expect(early.body.status).toBe('deferred');
      const joined = await call<{ messages: Message[] }>(
        base,
        'GET',
        `/threads/${threadId}/runs/${created.body.run_id}/join`,
      );
      expect(joined.status).toBe(200);
      expect(JSON.stringify(joined.body.messages)).toContain('joined');
    });

    it('makes run creation idempotent with a client run_id', async () => {
      const threadId = await newThread();
      const runId = randomUUID();
      const [first, second] = await Promise.all([
        call<Run>(base, 'POST', `/threads/${threadId}/runs`, userInput('run: echo once', { run_id: runId })),
        call<Run>(base, 'POST', `/threads/${threadId}/runs`, userInput('run: echo once', { run_id: runId })),
      ]);
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(first.body.run_id).toBe(runId);
      expect(second.body.run_id).toBe(runId);
      await call(base, 'GET', `/threads/${threadId}/runs/${runId}/join`);
      const state = await call<{ values: { messages: LangChainMessage[] } }>(
        base,
        'GET',
        `/threads/${threadId}/state`,
      );
      expect(state.body.values.messages.filter((message) => message.type === 'human')).toHaveLength(1);
      const runs = await call<Run[]>(base, 'GET', `/threads/${threadId}/runs`);
      expect(runs.body.map((run) => run.run_id)).toEqual([runId]);
    });

    it('answers 409 thread_busy under multitask_strategy=reject', async () => {
      const threadId = await newThread();
      await call(base, 'POST', `/threads/${threadId}/runs`, userInput('think: 1'));
      expectError(
        await call(
          base,
          'POST',
          `/threads/${threadId}/runs`,
          userInput('me too', { multitask_strategy: 'reject' }),
        ),
        409,
        'thread_busy',
      );
    });

    it('cancels a run, idempotently', async () => {
      const threadId = await newThread();
      const created = await call<Run>(base, 'POST', `/threads/${threadId}/runs`, userInput('think: 20'));
      const path = `/threads/${threadId}/runs/${created.body.run_id}/cancel`;
      const cancelled = await call<Run>(base, 'POST', path, {
        reason: 'user closed the tab and asked to stop',
      });
      expect(cancelled.body).toMatchObject({
        status: 'cancelled',
        error: { message: 'user closed the tab and asked to stop' },
      });
      expect((await call<Run>(base, 'POST', path)).body.status).toBe('cancelled');
    });

    it('answers 404 for runs of unknown threads and unknown runs of real threads', async () => {
      const threadId = await newThread();
      expectError(
        await call(base, 'POST', `/threads/${randomUUID()}/runs`, userInput('hi')),
        404,
        'thread_not_found',
      );
      expectError(await call(base, 'GET', `/threads/${threadId}/runs/${randomUUID()}`), 404, 'run_not_found');
      expectError(
        await call(base, 'POST', `/threads/${threadId}/runs/${randomUUID()}/cancel`),
        404,
        'run_not_found',
      );
      expectError(
        await call(base, 'GET', `/threads/${threadId}/runs/${randomUUID()}/join`),
        404,
        'run_not_found',
      );
    });

    it('creates the thread with the run when if_not_exists=create', async () => {
      const threadId = `t-${randomUUID()}`;
      const response = await waitRun<{ messages: Message[] }>(
        base,
        threadId,
        userInput('hello', { if_not_exists: 'create' }),
      );
      expect(response.status).toBe(200);
      expect((await call(base, 'GET', `/threads/${threadId}`)).body).toMatchObject({
        thread_id: threadId,
        summary: { runs: 1 },
      });
    });

    it('returns a failed run with its readable error and __error__ in the values', async () => {
      const threadId = await newThread();
      const response = await waitRun<{ messages: Message[]; __error__: { error: string; message: string } }>(
        base,
        threadId,
        userInput('hello', { config: { model: 'anthropic:claude-sonnet-4-5' } }),
      );
      expect(response.status).toBe(200);
      expect(response.body.__error__).toMatchObject({ error: 'ModelNotConfigured' });
      expect(response.body.__error__.message).toContain('ANTHROPIC_API_KEY');
    });
  });

  describe('operations', () => {
    it('reports health, readiness and its OpenAPI document', async () => {
      expect((await call(base, 'GET', '/healthz')).body).toEqual({ status: 'ok' });
      expect(await call(base, 'GET', '/readyz')).toMatchObject({ status: 200, body: { status: 'ready' } });
      const openapi = await call<{ openapi: string; paths: Record<string, unknown> }>(
        base,
        'GET',
        '/openapi.json',
      );
      expect(openapi.body.openapi).toBe('3.1.0');
      expect(Object.keys(openapi.body.paths)).toEqual(
        expect.arrayContaining([
          '/threads',
          '/threads/{thread_id}/runs/wait',
          '/threads/{thread_id}/runs/{run_id}/join',
        ]),
      );
    });

    it('is not ready when no worker polls its task queue', async () => {
      const idle = await startTestApi(client, await testConfig());
      try {
        const response = await call<ErrorBody & { checks: Record<string, string> }>(
          idle.url,
          'GET',
          '/readyz',
        );
        expect(response.status).toBe(503);
        expect(response.body.checks.workers).toContain('no worker is polling');
      } finally {
        await idle.stop();
      }
    });

    it('answers 503 temporal_unavailable quickly when Temporal cannot be reached', async () => {
      const deadClient = new Client({
        connection: Connection.lazy(apiConnectionOptions({ address: '127.0.0.1:1' })),
      });
      const offline = await startTestApi(deadClient, config);
      try {
        const started = Date.now();
        expectError(await call(offline.url, 'GET', '/threads/anything'), 503, 'temporal_unavailable');
        expect(Date.now() - started).toBeLessThan(10_000);
      } finally {
        await offline.stop();
      }
    });
    it('answers 503 temporal_unavailable, not 500, when its Temporal does not serve its namespace', async () => {
      // What a broken dev server answers every call (its namespace registry unreadable), and what
      // a namespace that was never registered answers: the real server, a namespace it lacks.
      const lost = new Client({ connection: client.connection, namespace: `keel-missing-${randomUUID()}` });
      const stray = await startTestApi(lost, config);
      try {
        const threadId = randomUUID();
        // A run on a thread that is not there yet: update-with-start.
        expectError(
          await call(stray.url, 'POST', `/threads/${threadId}/runs`, {
            ...userInput('hello'),
            if_not_exists: 'create',
          }),
          503,
          'temporal_unavailable',
        );
        expectError(await call(stray.url, 'POST', '/threads', {}), 503, 'temporal_unavailable');
        expectError(await call(stray.url, 'GET', `/threads/${threadId}`), 503, 'temporal_unavailable');
      } finally {
        await stray.stop();
      }
    });
  });

  describe('with tokens', () => {
    let secured: RunningApi;
    const alice = { authorization: 'Bearer alice-token-0123456789' };
    const bob = { authorization: 'Bearer bob-token-0123456789' };

    beforeAll(async () => {
      const tokens = await testConfig({
        KEEL_API_TOKENS: 'alice:alice-token-0123456789,bob:bob-token-0123456789',
        KEEL_TASK_QUEUE: config.taskQueue,
      });
      secured = await startTestApi(client, tokens);
    });

    afterAll(async () => {
      await secured.stop();
    });

    it('answers 401 without a valid token, but health stays public', async () => {
      expectError(await call(secured.url, 'POST', '/threads', {}), 401, 'unauthenticated');
      expectError(
        await call(secured.url, 'POST', '/threads', {}, { authorization: 'Bearer nope' }),
        401,
        'unauthenticated',
      );
      expect((await call(secured.url, 'GET', '/healthz')).status).toBe(200);
    });

    it.each([
      ['an empty bearer token', { authorization: 'Bearer ' }],
      ['an empty x-api-key', { 'x-api-key': '' }],
      ['a blank x-api-key', { 'x-api-key': '   ' }],
      ['a prefix of a token', { authorization: 'Bearer alice-token' }],
      ['a token with a character added', { authorization: 'Bearer alice-token-0123456789x' }],
      ['an owner name', { 'x-api-key': 'alice' }],
    ])('refuses %s with 401', async (_case, headers) => {
      expectError(await call(secured.url, 'POST', '/threads', {}, headers), 401, 'unauthenticated');
    });

    it('takes the token as x-api-key too, and says so when none is sent', async () => {
      const refused = await call<{ error: { message: string } }>(secured.url, 'GET', '/threads/any');
      expect(refused.body.error.message).toBe(
        'send a valid token as "Authorization: Bearer <token>" or "x-api-key: <token>"',
      );
      const created = await call<{ owner: string }>(
        secured.url,
        'POST',
        '/threads',
        {},
        { 'x-api-key': 'bob-token-0123456789' },
      );
      expect(created).toMatchObject({ status: 200, body: { owner: 'bob' } });
    });

    it("hides one owner's threads from another (404, as if they did not exist)", async () => {
      const created = await call<{ thread_id: string; owner: string }>(
        secured.url,
        'POST',
        '/threads',
        {},
        alice,
      );
      expect(created.body.owner).toBe('alice');
      const threadId = created.body.thread_id;
      expect((await call(secured.url, 'GET', `/threads/${threadId}`, undefined, alice)).status).toBe(200);
      expectError(
        await call(secured.url, 'GET', `/threads/${threadId}`, undefined, bob),
        404,
        'thread_not_found',
      );
      expectError(
        await call(secured.url, 'POST', `/threads/${threadId}/runs`, userInput('hi'), bob),
        404,
        'thread_not_found',
      );
      expectError(
        await call(secured.url, 'GET', `/threads/${threadId}/runs`, undefined, bob),
        404,
        'thread_not_found',
      );
    });
  });
});
