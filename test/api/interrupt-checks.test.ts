/**
 * A wait that watches for an interrupt beside the run's end (`join`, a `runs/wait` whose input
 * went by signal) asks the thread's description every second, and queries the run only once the
 * thread says it waits on a human (decision 0303): a busy run costs its worker no query tasks, and
 * a run that stops for an approval is still answered with its interrupt.
 */
import { randomUUID } from 'node:crypto';
import type { Run } from '../../common/run';
import { apiHarness, call, userInput } from '../helpers/api';
import { countCalls } from '../helpers/temporal-calls';

jest.setTimeout(300_000);

describe('the interrupt checks of a wait', () => {
  const harness = apiHarness(() => ({ KEEL_MODEL: 'scripted:demo' }));

  const startRun = async (config: Record<string, unknown>, text: string) => {
    const threadId = randomUUID();
    expect((await call(harness.base, 'POST', '/threads', { thread_id: threadId, config })).status).toBe(200);
    const run = await call<Run>(harness.base, 'POST', `/threads/${threadId}/runs`, userInput(text));
    expect(run.status).toBe(200);
    return { threadId, runId: run.body.run_id };
  };
  const join = (threadId: string, runId: string) =>
    countCalls(harness.client, () =>
      call<Record<string, unknown>>(
        harness.base,
        'GET',
        `/threads/${threadId}/runs/${runId}/join?timeout_s=60`,
      ),
    );

  it('queries nothing while the run is busy, and answers its end', async () => {
    const { threadId, runId } = await startRun({ approval: 'auto' }, 'think: 3');
    const [joined, calls] = await join(threadId, runId);
    expect(joined.status).toBe(200);
    // The run looked up when the join began (`getRun`) and the values read at its end: no
    // interrupt check queried it (each did before, about one a second).
    expect(calls.get('queryWorkflow')).toBe(2);
    expect(calls.get('describeWorkflowExecution') ?? 0).toBeGreaterThanOrEqual(2);
  });

  it('answers the interrupt of a run that waits on a human', async () => {
    // Busy for two seconds first, so the join is already watching when the run stops.
    const { threadId, runId } = await startRun({ approval: 'require' }, 'think: 2\nrun: echo gated');
    const [joined, calls] = await join(threadId, runId);
    expect(calls.get('describeWorkflowExecution') ?? 0).toBeGreaterThanOrEqual(2);
    expect(joined.status).toBe(200);
    expect(joined.body.__interrupt__).toEqual([expect.objectContaining({ value: expect.anything() })]);
  });
});
