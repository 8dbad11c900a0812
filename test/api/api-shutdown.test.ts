/**
 * Stopping the API: the listener closes, a caller waiting on a run is answered at once with the
 * run deferred (never cut off), and the run itself finishes untouched. Also the operator's
 * state dump.
 */
import type { RunningApi } from '../../api/server';
import { call, startTestApi, userInput, waitRun } from '../helpers/api';
import { eventually } from '../helpers/temporal';
import { workerHarness } from '../helpers/worker-harness';
import * as messages from '../../common/messages';
import { workflowIdFor } from '../../common/thread';

describe('the API', () => {
  const setup = workerHarness();

  const newThread = async (api: RunningApi): Promise<string> => {
    const created = await call<{ thread_id: string }>(api.url, 'POST', '/threads', {});
    return created.body.thread_id;
  };

  it('answers a waiting runs/wait with 202 and the run deferred when it stops, and the run still completes', async () => {
    const api = await startTestApi(setup.client, setup.config);
    const threadId = await newThread(api);
    const waiting = waitRun<{ run_id: string; status: string }>(
      api.url,
      threadId,
      userInput('think: 15'),
      'timeout_s=120',
    );
    const handle = setup.client.workflow.getHandle(workflowIdFor(threadId));
    await eventually(
      async () => {
        const thread = await handle.query(messages.getThreadQuery);
        return thread.active_run_id === undefined ? undefined : true;
      },
      20_000,
      'the run to start',
    );
    const stopAt = Date.now();
    const stopped = api.stop();
    const answer = await waiting;
    await stopped;
    process.stderr.write(`[api] stop answered the wait in ${Date.now() - stopAt} ms\n`);
    expect(answer.status).toBe(202);
    expect(answer.body.status).toBe('deferred');
    await expect(fetch(`${api.url}/healthz`)).rejects.toThrow();
    const run = await eventually(
      async () => {
        const found = await handle.query(messages.getRunQuery, { run_id: answer.body.run_id });
        return found?.status === 'completed' ? found : undefined;
      },
      30_000,
      'the run to complete',
    );
    expect(run.status).toBe('completed');
  });

  it('gives operators the whole workflow state at GET /threads/:id/debug', async () => {
    const api = await startTestApi(setup.client, setup.config);
    try {
      const threadId = await newThread(api);
      await call(api.url, 'POST', `/threads/${threadId}/runs/wait`, userInput('hello'));
      const dump = await call<messages.StateDump>(api.url, 'GET', `/threads/${threadId}/debug`);
      expect(dump.status).toBe(200);
      expect(dump.body).toMatchObject({ in_flight_activities: 0, draining: false });
      expect(dump.body.history_length).toBeGreaterThan(0);
      expect(dump.body.state).toMatchObject({ thread: { thread_id: threadId } });
      expect((dump.body.state.transcript as unknown[]).length).toBe(2);
      const missing = await call(api.url, 'GET', '/threads/no-such-thread/debug');
      expect(missing.status).toBe(404);
    } finally {
      await api.stop();
    }
  });
});
