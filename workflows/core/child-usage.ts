/** Child agents' usage counts toward the parent: the thread's total and the run that spawned it. */
import { addUsage } from '../../common/usage';
import { emit, iso } from './emit';
import type { ConversationState } from './state';
import type { ConversationEvent, Transition } from './transitions';

export function rollUpChildUsage(
  state: ConversationState,
  event: Extract<ConversationEvent, { type: 'childUsageReported' }>,
): Transition {
  const usage = addUsage(state.usage, event.usage);
  let runUsage = event.usage;
  const runs = state.runs.map((run) => {
    if (run.run_id !== event.run_id) return run;
    runUsage = addUsage(run.usage, event.usage);
    return { ...run, usage: runUsage, updated_at: iso(event.now) };
  });
  return {
    state: { ...state, usage, runs },
    commands: [emit.usageUpdated(event.run_id, runUsage, usage)],
  };
}
