/**
 * Reads for a caller that waits anyway: a `runs/wait` whose run is over reads the thread's values
 * within what is left of its wait (`ReadOptions.until`), not the read timeout, so a worker that is
 * slow (a loaded machine) or briefly away does not turn a finished run into a 503. And the check a
 * wait repeats for interrupts asks once per check (`peekRun`), never waiting out the thread.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { ThreadGateway } from '../../api/gateway/thread-gateway';
import { ApiError } from '../../api/errors';
import type { RunningApi } from '../../api/server';
import { threadRef } from '../../api/threads/thread-ref';
import type { KeelConfig } from '../../platform/config';
import type { Run } from '../../common/run';
import { call, startTestApi, userInput, waitRun } from '../helpers/api';
import {
  closeTestClient,
  startTestWorker,
  testClient,
  testConfig,
  type RunningWorker,
} from '../helpers/temporal';

jest.setTimeout(120_000);

describe('a read within a caller’s wait', () => {
  let client: Client;
  let config: KeelConfig;
  let api: RunningApi;
  let worker: RunningWorker | undefined;

  beforeAll(async () => {
    client = await testClient();
    // A short read timeout: what a loaded worker's slow answer looks like to the API.
    config = await testConfig({ KEEL_READ_TIMEOUT_MS: '1000' });
    worker = await startTestWorker({ config });
    api = await startTestApi(client, config);
  });

  afterAll(async () => {
    await api?.stop();
    await worker?.stop();
    await closeTestClient();
  });

  it('outlasts the read timeout and answers once a worker is back, where a plain read gives up', async () => {
    const threadId = randomUUID();
    const finished = await waitRun<{ messages: unknown[] }>(
      api.url,
      threadId,
      userInput('hello', { if_not_exists: 'create' }),
    );
    expect(finished.status).toBe(200);
    const runs = await call<Run[]>(api.url, 'GET', `/threads/${threadId}/runs`);
    const runId = runs.body[0]!.run_id;
    await worker!.stop();
    worker = undefined;

    const gateway = new ThreadGateway(client, config);
    const thread = threadRef(threadId, undefined);
    const withinWait = gateway.transcript(thread, undefined, { until: Date.now() + 90_000 });
    const plain = gateway.transcript(thread).then(
      () => 'answered',
      (error: unknown) => error,
    );
    // The plain read gives up while no worker holds the thread (503, as before) ...
    const refusal = await plain;
    expect(refusal).toBeInstanceOf(ApiError);
    expect((refusal as ApiError).status).toBe(503);
    // ... and so does a check for interrupts, without throwing.
    expect(await gateway.peekRun(thread, runId, 500)).toBeUndefined();

    // Only after that does a worker come back: the read given the wait is still waiting, and answers.
    worker = await startTestWorker({ config });
    const transcript = await withinWait;
    expect(transcript.map((message) => message.role)).toEqual(['user', 'assistant']);
    const run = await gateway.peekRun(thread, runId, 30_000);
    expect(run).toMatchObject({ run_id: runId, status: 'completed' });
  });
});
