/**
 * A user's input becoming a run: the run record every door creates, and the failed run that an
 * input taken durably but refused by the thread's rules becomes (nothing the user sent vanishes).
 */
import { limits } from '../../common/limits';
import type { SubmitInput } from '../../common/messages';
import { queuedRun, type Run, type RunError, type StatusReason } from '../../common/run';
import { textOf } from '../../common/transcript';
import { emit, iso } from './emit';
import type { ThreadState } from './state';
import type { Transition } from './transitions';

/** The run an input opens on this thread. */
export const newRun = (state: ThreadState, input: SubmitInput, now: number, nextOffset?: number): Run =>
  queuedRun({ thread_id: state.thread.thread_id, model: state.thread.config.model }, input, now, nextOffset);

const refusalReasons: Partial<Record<RunError['type'], StatusReason>> = {
  ThreadBusy: 'thread_busy',
  ThreadClosed: 'thread_closed',
  QuotaExceeded: 'quota_exceeded',
};

/** Records the input as a run that failed at once, saying why, with its text kept for a resend. */
export function refuseInput(
  state: ThreadState,
  input: SubmitInput,
  refusal: RunError,
  now: number,
  nextOffset: number | undefined,
): Transition {
  const queued = newRun(state, input, now, nextOffset);
  const run: Run = {
    ...queued,
    status: 'failed',
    status_reason: refusalReasons[refusal.type] ?? 'invalid_input',
    error: refusal,
    ended_at: iso(now),
    refused_input: textOf(input.content).slice(0, limits.runOutputChars),
  };
  return {
    state: { ...state, runs: [...state.runs, run].slice(-limits.runsKept) },
    commands: [emit.run('run.created', queued), emit.run('run.failed', run)],
  };
}
