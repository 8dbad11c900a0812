/**
 * What a new user meets in their first hour with the API (issue 13): no Node warning on streamed
 * runs, a DELETE that is final when it answers, and errors that name what they refer to.
 */
import type { Thread } from '../../common/thread';
import { apiHarness, call, freePort, userInput } from '../helpers/api';
import { readSse } from '../helpers/sse';
import { startWorkerProcess } from '../helpers/worker-process';

jest.setTimeout(120_000);

describe('the API in the first hour', () => {
  const harness = apiHarness();

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
          body: JSON.stringify(userInput(`run ${index}: ${'word '.repeat(120)}`)),
        });
        // Each batch of text is a poll of the thread's stream: more than ten calls per request.
        expect(streamed.events.filter((event) => event.event === 'message.delta').length).toBeGreaterThan(12);
        expect(streamed.events.at(-1)?.event).toBe('end');
      }
      const waited = await call(
        base,
        'POST',
        `/threads/${threadId}/runs/wait?timeout_s=60`,
        userInput('waited'),
      );
      expect(waited.status).toBe(200);
      expect((await followed).events.filter((event) => event.event === 'run.completed')).toHaveLength(4);
      expect(apiProcess.output.filter((line) => line.includes('Warning'))).toEqual([]);
    } finally {
      apiProcess.kill('SIGTERM');
      await apiProcess.exited;
    }
  });
});
