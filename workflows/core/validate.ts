/**
 * Update validators as pure functions: a rejection is returned, and the workflow turns it into a
 * failure of the given type, so nothing invalid ever enters history.
 */
import { checkInput, type Rejection } from '../../common/input-rules';
import { limits } from '../../common/limits';
import type { SubmitInput } from '../../common/messages';
import { isTerminal } from '../../common/run';
import { hasCheckpoint } from './branches';
import type { ThreadState } from './state';
import { findRun } from './state';

export function validateSubmit(state: ThreadState, input: SubmitInput): Rejection | undefined {
  if (state.closed) return { type: 'ThreadClosed', message: `thread ${state.thread.thread_id} is closed` };
  const invalid = checkInput(input);
  if (invalid !== undefined) return invalid;
  if (findRun(state, input.run_id) !== undefined) {
    return { type: 'RunExists', message: `run ${input.run_id} already exists on this thread` };
  }
  // Refused by its owner's quota at a workflow's door (decision 0480): recorded, so the owner sees
  // why the fire made nothing, and never run.
  if (input.quota_refused !== undefined)
    return { type: 'QuotaExceeded', message: input.quota_refused.message };
  if (input.checkpoint_id !== undefined && !hasCheckpoint(state, input.checkpoint_id)) {
    return { type: 'CheckpointNotFound', message: `checkpoint ${input.checkpoint_id} not found` };
  }
  const busy = state.active !== null || state.queue.length > 0;
  if (busy && input.multitask_strategy === 'reject') {
    return {
      type: 'ThreadBusy',
      message: `thread ${state.thread.thread_id} is busy with run ${state.active?.run_id ?? state.queue[0]?.run_id}`,
    };
  }
  if (state.queue.length >= limits.maxQueuedRuns) {
    return { type: 'ThreadBusy', message: `thread has ${state.queue.length} queued runs, the most it holds` };
  }
  return undefined;
}

/** An update that names a run: the run must be the thread's. */
export function validateRunRef(state: ThreadState, runId: string): Rejection | undefined {
  if (findRun(state, runId) === undefined)
    return { type: 'RunNotFound', message: `no run ${runId} on this thread` };
  return undefined;
}

/** Only a finished run's record can be deleted; an active one is cancelled first. */
export function validateDeleteRun(state: ThreadState, runId: string): Rejection | undefined {
  const run = findRun(state, runId);
  if (run === undefined) return { type: 'RunNotFound', message: `no run ${runId} on this thread` };
  if (!isTerminal(run.status))
    return { type: 'RunActive', message: `run ${runId} is ${run.status}; cancel it before deleting it` };
  return undefined;
}
