/** Child agents' usage counts toward the parent: the thread's total and the run that spawned it. */
import { addUsage, type Usage } from '../../common/usage';
import { emit, iso } from './emit';
import type { ThreadState } from './state';
import type { Transition } from './transitions';

export function rollUpChildUsage(state: ThreadState, runId: string, child: Usage, now: number): Transition {
  const usage = addUsage(state.usage, child);
  let runUsage = child;
  const runs = state.runs.map((run) => {
    if (run.run_id !== runId) return run;
    runUsage = addUsage(run.usage, child);
    return { ...run, usage: runUsage, updated_at: iso(now) };
  });
  return {
    state: { ...state, usage, runs },
    commands: [emit.usageUpdated(runId, runUsage, usage)],
  };
}
