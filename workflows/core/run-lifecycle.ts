/**
 * A run's record through its life on the thread: queued when its input arrives, started when the
 * thread is free, deferred, finished (completed, failed or cancelled). The sequencer
 * (sequencer.ts) alone calls these: it decides when a run moves, and this module how its record
 * shows it.
 */
import { limits, truncateWithNote } from '../../common/limits';
import type { SubmitInput } from '../../common/messages';
import {
  isTerminal,
  type EndedRun,
  type Run,
  type RunBase,
  type RunError,
  type StatusReason,
} from '../../common/run';
import { forkAt } from './branches';
import { emit, iso } from './emit';
import { newRun } from './intake';
import { findRun, threadSummary, type QueuedRun, type ThreadState } from './state';
import { appendMessages } from './transcript';
import type { Transition } from './transitions';
import { say } from './wording';

export const unchanged = (state: ThreadState): Transition => ({ state, commands: [] });

type RunEvent = 'run.started' | 'run.deferred' | 'run.completed' | 'run.failed' | 'run.cancelled';

/** What changes on a run in any state: its count of model calls, its usage. */
type Progress = Partial<Pick<RunBase, 'steps' | 'usage'>>;

/**
 * Applies `change` to a run (progress in any state, or a move to another state) and optionally
 * emits a run event carrying the updated run.
 */
export function updateRun(
  state: ThreadState,
  runId: string,
  now: number,
  change: Progress | ((run: Run) => Run),
  event?: RunEvent,
): Transition {
  let updated: Run | undefined;
  const runs = state.runs.map((run) => {
    if (run.run_id !== runId) return run;
    const changed = typeof change === 'function' ? change(run) : { ...run, ...change };
    updated = { ...changed, updated_at: iso(now) };
    return updated;
  });
  const commands = event === undefined || updated === undefined ? [] : [emit.run(event, updated)];
  return { state: { ...state, runs }, commands };
}

/** What an ended run says about how it ended. */
type EndingFields = Pick<EndedRun, 'status' | 'ended_at' | 'status_reason' | 'error' | 'output' | 'summary'>;

/** The run, ended: the fields only an ended run has (in the order given, as the run shows them). */
function ended(run: Run, ending: EndingFields): EndedRun {
  return { ...run, ...ending };
}

/** The run, started now; one that already ended stays as it is. */
function started(run: Run, at: string): Run {
  if (isEnded(run)) return run;
  return { ...run, status: run.status === 'deferred' ? 'deferred' : 'running', started_at: at };
}

/** The run, marked deferred (its caller stopped waiting); one that already ended stays as it is. */
function deferred(run: Run): Run {
  return isEnded(run) ? run : { ...run, status: 'deferred' };
}

const isEnded = (run: Run): run is EndedRun => isTerminal(run.status);

/** A new input: its run is queued (`run.created`); whether it interrupts another is the sequencer's. */
export function queueRun(
  state: ThreadState,
  input: SubmitInput,
  now: number,
  nextOffset: number | undefined,
): Transition {
  const run = newRun(state, input, now, nextOffset);
  const runs = [...state.runs, run].slice(-limits.runsKept);
  const queued = { ...state, runs, queue: [...state.queue, queuedOf(input)] };
  return { state: queued, commands: [emit.run('run.created', run)] };
}

const queuedOf = (input: SubmitInput): QueuedRun => ({
  run_id: input.run_id,
  content: input.content,
  ...(input.config === undefined ? {} : { config: input.config }),
  ...(input.checkpoint_id === undefined ? {} : { checkpoint_id: input.checkpoint_id }),
  ...(input.deltas === false ? { deltas: false as const } : {}),
});

/** A finished run's record removed; its messages stay in the transcript. */
export function deleteRun(state: ThreadState, runId: string): Transition {
  const run = findRun(state, runId);
  if (run === undefined || !isTerminal(run.status)) return unchanged(state);
  return { state: { ...state, runs: state.runs.filter((kept) => kept !== run) }, commands: [] };
}

/** Keys merged into the thread's metadata. */
export function patchMetadata(state: ThreadState, metadata: Record<string, unknown>): Transition {
  return {
    state: { ...state, thread: { ...state.thread, metadata: { ...state.thread.metadata, ...metadata } } },
    commands: [],
  };
}

/**
 * Takes the oldest queued run and makes it active, its input the transcript's newest message;
 * undefined when a run is active, the thread is closed or nothing is queued. Its first model step
 * is the caller's to begin.
 */
export function startQueuedRun(state: ThreadState, now: number): Transition | undefined {
  const next = state.queue[0];
  if (state.active !== null || state.closed || next === undefined) return undefined;
  const queued = { ...state, queue: state.queue.slice(1) };
  const run = findRun(state, next.run_id);
  // A run no longer remembered (past `limits.runsKept`) is dropped from the queue.
  if (run === undefined) return unchanged(queued);
  // A fork goes on from its checkpoint; one no longer kept (since compacted away) fails the run.
  const checkpoint = next.checkpoint_id;
  const from = checkpoint === undefined ? queued : forkAt(queued, checkpoint);
  if (from === undefined) {
    const error: RunError = { type: 'CheckpointNotFound', message: say.checkpointGone(String(checkpoint)) };
    const ending = { status: 'failed', status_reason: 'invalid_input', error, ended_at: iso(now) } as const;
    return updateRun(queued, run.run_id, now, (failed) => ended(failed, ending), 'run.failed');
  }
  // A run through an assistant configures the thread from this run on.
  const config = next.config ?? from.thread.config;
  const configured = { ...from, thread: { ...from.thread, config } };
  // An input that brings no message goes on from the thread as it stands, as LangGraph's run
  // without input does: nothing is left to do, so the run ends at once (decision 0381).
  const withInput =
    next.content.length === 0
      ? unchanged(configured)
      : appendMessages(configured, run.run_id, now, [{ role: 'user', content: next.content }]);
  const active = {
    run_id: run.run_id,
    steps: 0,
    step: { kind: 'model' as const },
    started_at_ms: now,
    model: run.model,
    ...(next.deltas === false ? { deltas: false as const } : {}),
  };
  const begun = updateRun(
    { ...withInput.state, active },
    run.run_id,
    now,
    (queuedRun) => started(queuedRun, iso(now)),
    'run.started',
  );
  if (next.content.length > 0) return begun;
  const finished = finishRun(begun.state, now, 'completed', {});
  return { state: finished.state, commands: [...begun.commands, ...finished.commands] };
}

export interface Ending {
  reason?: StatusReason;
  error?: RunError;
  output?: string;
}

/** Ends the active run; a failed run gets a notice in the transcript for people. */
export function finishRun(
  state: ThreadState,
  now: number,
  status: 'completed' | 'failed' | 'cancelled',
  ending: Ending,
): Transition {
  const active = state.active;
  if (active === null) return unchanged(state);
  let next: ThreadState = {
    ...state,
    active: null,
    totals: {
      ...state.totals,
      runs: state.totals.runs + 1,
      duration_ms: state.totals.duration_ms + Math.max(0, now - active.started_at_ms),
    },
  };
  if (ending.error !== undefined && status === 'failed') {
    const text = say.runFailed(ending.error.message);
    next = appendMessages(next, active.run_id, now, [
      { role: 'assistant', content: [{ type: 'text', text }], model: 'keel', stop_reason: 'end_turn' },
    ]).state;
  }
  const fields: EndingFields = {
    status,
    ended_at: iso(now),
    ...(ending.reason === undefined ? {} : { status_reason: ending.reason }),
    ...(ending.error === undefined ? {} : { error: ending.error }),
    ...(ending.output === undefined
      ? {}
      : { output: truncateWithNote(ending.output, limits.runOutputChars) }),
    summary: threadSummary(next),
  };
  return updateRun(next, active.run_id, now, (run) => ended(run, fields), `run.${status}`);
}

/** Cancels a run not yet started: it leaves the queue and ends `cancelled`. */
export function cancelQueuedRun(
  state: ThreadState,
  runId: string,
  now: number,
  reason: StatusReason,
  error: RunError,
): Transition {
  const dequeued = { ...state, queue: state.queue.filter((queued) => queued.run_id !== runId) };
  const ending = { status: 'cancelled', status_reason: reason, error, ended_at: iso(now) } as const;
  return updateRun(dequeued, runId, now, (run) => ended(run, ending), 'run.cancelled');
}

/** `runs/wait` gave up waiting: the run goes on, marked deferred. */
export function deferRun(state: ThreadState, runId: string, now: number): Transition {
  const run = findRun(state, runId);
  if (run === undefined || isTerminal(run.status) || run.status === 'deferred') return unchanged(state);
  return updateRun(state, runId, now, deferred, 'run.deferred');
}
