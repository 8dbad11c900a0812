/**
 * The agent loop, in one place: which event moves a run where, and what commands that emits.
 * A run is queued, started with a model step, and loops (the model asks for tools, they run,
 * their results go back to the model) until the model ends its turn, a stop condition ends it, or
 * it is cancelled. The modules around it are pure over their slice and return facts: model-step
 * (the call and what an answer comes to), tool-step (the calls and their results, `done` when all
 * are in), approvals, sub-agents (an answer for a call, or a continuation run), budget and
 * stop-conditions. Only this module, through run-lifecycle.ts (the run's record) and
 * transcript.ts, moves a run or appends to the transcript.
 */
import type { SubmitInput } from '../../common/messages';
import { isTerminal, type RunError, type StatusReason } from '../../common/run';
import { textOf, toolUsesOf } from '../../common/transcript';
import { addUsage } from '../../common/usage';
import { markAwaiting } from './approval-gate';
import { decideApproval, expireApproval } from './approvals';
import { exceededEvent, updateLimits, warnIfNear } from './budget';
import { rollUpChildUsage } from './child-usage';
import { emit } from './emit';
import { refuseInput } from './intake';
import {
  answerDeltas,
  callModelCommand,
  countAnswer,
  currentModelStep,
  isCurrentModelStep,
  keptContent,
  modelFailure,
  stoppedDeltas,
  stoppingOf,
} from './model-step';
import { deletePushConfig, setPushConfig } from './push';
import {
  cancelQueuedRun,
  deferRun,
  deleteRun,
  finishRun,
  patchMetadata,
  queueRun,
  startQueuedRun,
  unchanged,
  updateRun,
} from './run-lifecycle';
import { findRun, type ActiveRun, type DoneCall, type Stopping, type ThreadState } from './state';
import {
  completionReason,
  continuesTurn,
  runsTools,
  stopAfterToolStep,
  stopBeforeModelCall,
} from './stop-conditions';
import {
  childCompleted,
  childStarted,
  childUsageReported,
  childWaitExpired,
  type SubAgentChange,
} from './sub-agents';
import {
  interruptToolStep,
  recordToolFailure,
  recordToolResult,
  startToolStep,
  type ToolStepChange,
} from './tool-step';
import { appendMessages } from './transcript';
import type { Command, ConversationEvent, Transition } from './transitions';
import { say } from './wording';

type Event<T extends ConversationEvent['type']> = Extract<ConversationEvent, { type: T }>;

/** The event's transition; then, whenever the thread is free, the oldest queued run starts. */
export function sequence(state: ThreadState, event: ConversationEvent): Transition {
  return settle(apply(state, event), event.now);
}

function apply(state: ThreadState, event: ConversationEvent): Transition {
  const { now } = event;
  switch (event.type) {
    case 'inputSubmitted':
      return submit(state, event.input, now, event.next_offset, event.keep_partial === true);
    case 'inputRefused':
      return refuseInput(state, event.input, event.refusal, now, event.next_offset);
    case 'modelResponded':
      return modelResponded(state, event);
    case 'modelFailed':
      return modelFailed(state, event);
    case 'modelStopped':
      return modelStopped(state, event);
    case 'toolFinished':
      return afterToolStep(recordToolResult(state, event.run_id, event.tool_use_id, event.outcome), now);
    case 'toolFailed':
      return afterToolStep(recordToolFailure(state, event.run_id, event.tool_use_id, event.failure), now);
    case 'approvalDecided':
      return afterApprovals(decideApproval(state, event.decision, now), now);
    case 'approvalExpired':
      return afterApprovals(expireApproval(state, event.approval_id, now), now);
    case 'limitsUpdated':
      return updateLimits(state, event.limits);
    case 'runDeleted':
      return deleteRun(state, event.run_id);
    case 'pushConfigSet':
      return setPushConfig(state, event.run_id, event.config);
    case 'pushConfigDeleted':
      return deletePushConfig(state, event.run_id, event.config_id);
    case 'metadataPatched':
      return patchMetadata(state, event.metadata);
    case 'cancelRequested': {
      const why = { reason: 'cancelled_by_user' as const, message: event.reason };
      return cancelRun(state, event.run_id, now, why, event.keep_partial === true);
    }
    case 'runDeferred':
      return deferRun(state, event.run_id, now);
    case 'closeRequested':
      return closeThread(state, now, event.reason, event.keep_partial === true);
    case 'childUsageReported':
      return childUsageReported(state, event.run_id, event.usage, now);
    case 'childStarted':
      return afterChildNews(childStarted(state, event), now);
    case 'childWaitExpired':
      return afterChildNews(childWaitExpired(state, event), now);
    case 'childCompleted':
      return afterChildNews(childCompleted(state, event), now);
    case 'parentReported':
      return closeThread(state, now, undefined, false);
  }
}

/** While the thread is free and a run waits, the oldest queued run starts with a model step. */
function settle(transition: Transition, now: number): Transition {
  let settled = transition;
  for (;;) {
    const started = startQueuedRun(settled.state, now);
    if (started === undefined) return settled;
    settled = beginModelStep(started.state, now, [...settled.commands, ...started.commands]);
  }
}

/** Asks the model for the next step, unless the run has used all the steps or the budget it may. */
function beginModelStep(state: ThreadState, now: number, commands: Command[]): Transition {
  const active = state.active;
  if (active === null) return { state, commands };
  const stop = stopBeforeModelCall(state, active);
  if (stop !== undefined) {
    const finished = finishRun(state, now, 'failed', stop);
    const notice = stop.reason === 'budget_exceeded' ? [exceededEvent(state, active.run_id)] : [];
    return { state: finished.state, commands: [...commands, ...notice, ...finished.commands] };
  }
  const steps = active.steps + 1;
  const next = { ...state, active: { ...active, steps, step: { kind: 'model' as const } } };
  // Logged in the task that schedules the call, so it costs no history event of its own: it tells
  // a stream to look for the call's live text (decision 0340). A call nobody streams has none.
  const started = active.deltas === false ? [] : [emit.messageStarted(active.run_id, steps)];
  return { state: next, commands: [...commands, ...started, callModelCommand(next, next.active, steps)] };
}

function modelResponded(state: ThreadState, event: Event<'modelResponded'>): Transition {
  const { result, now, run_id, step } = event;
  const active = currentModelStep(state, run_id, step);
  const run = findRun(state, run_id);
  if (active === undefined || run === undefined) return unchanged(state);
  const usage = addUsage(run.usage, result.usage);
  const counted = updateRun(countAnswer(state, result), run_id, now, { usage, steps: step });
  const warned = warnIfNear(counted.state, run_id);
  const commands: Command[] = [
    ...answerDeltas(result, run_id, step),
    ...counted.commands,
    emit.usageUpdated(run_id, usage, counted.state.usage),
    ...warned.commands,
  ];
  // Stopped, but the answer came first: it is kept as far as its text goes, as a stopped answer.
  const stopping = stoppingOf(state);
  if (stopping !== undefined)
    return endStopped(warned.state, active, stopping, textOf(result.content), now, commands);
  if (runsTools(result, toolUsesOf(result.content).length > 0)) {
    const started = startToolStep(warned.state, active, result, now);
    const awaiting = markAwaiting(started.state, run_id, now);
    return afterToolStep({ ...started, state: awaiting, commands: [...commands, ...started.commands] }, now);
  }
  const content = keptContent(result);
  const appended =
    content.length === 0
      ? { state: warned.state, appended: [] }
      : appendMessages(warned.state, run_id, now, [
          { role: 'assistant', content, model: result.model, stop_reason: result.stop_reason },
        ]);
  const emitted = appended.appended.map((message) => emit.messageCompleted(run_id, message));
  if (continuesTurn(result)) return beginModelStep(appended.state, now, [...commands, ...emitted]);
  const reason = completionReason(result);
  const finished = finishRun(appended.state, now, 'completed', {
    output: textOf(content),
    ...(reason === undefined ? {} : { reason }),
  });
  return { state: finished.state, commands: [...commands, ...emitted, ...finished.commands] };
}

/**
 * A model call failed after Temporal's retries. What its attempts were billed is charged first,
 * so the ledger keeps what was paid for (decision 0425); a call told to stop that failed instead
 * ends the run as the Stop asked, with no text.
 */
function modelFailed(state: ThreadState, event: Event<'modelFailed'>): Transition {
  const { run_id, step, error, billed, now } = event;
  if (!isCurrentModelStep(state, run_id, step)) return unchanged(state);
  const charged = billed === undefined ? unchanged(state) : rollUpChildUsage(state, run_id, billed, now);
  const stopping = stoppingOf(charged.state);
  if (stopping !== undefined) {
    const cancelled = finishRun(charged.state, now, 'cancelled', stopping);
    return { state: cancelled.state, commands: [...charged.commands, ...cancelled.commands] };
  }
  const { stop, notice } = modelFailure(charged.state, run_id, error);
  const failed = finishRun(charged.state, now, 'failed', stop);
  return { state: failed.state, commands: [...charged.commands, ...notice, ...failed.commands] };
}

/** The model call told to stop has: its text becomes the run's stopped answer, and the run ends. */
function modelStopped(state: ThreadState, event: Event<'modelStopped'>): Transition {
  const { run_id, step, text, now, streamed, billed } = event;
  const active = currentModelStep(state, run_id, step);
  const stopping = stoppingOf(state);
  if (active === undefined || stopping === undefined) return unchanged(state);
  // What the stopped call was billed is charged first, so the ledger keeps what was paid for
  // (decision 0425).
  const charged = billed === undefined ? unchanged(state) : rollUpChildUsage(state, run_id, billed, now);
  const deltas = stoppedDeltas(run_id, step, text, streamed);
  const stopped = endStopped(charged.state, active, stopping, text, now, deltas);
  return { state: stopped.state, commands: [...charged.commands, ...stopped.commands] };
}

/**
 * Ends a stopped run. Its text, if any, is committed as an assistant message marked `stopped`:
 * text only, so the next request stays valid for every provider (no half tool call, and no
 * blank text block, which Anthropic refuses).
 */
function endStopped(
  state: ThreadState,
  active: ActiveRun,
  stopping: Stopping,
  text: string,
  now: number,
  commands: Command[],
): Transition {
  const kept =
    text.trim() === ''
      ? { state, appended: [] }
      : appendMessages(state, active.run_id, now, [
          {
            role: 'assistant',
            content: [{ type: 'text', text }],
            model: active.model,
            stop_reason: 'end_turn',
            stopped: true,
          },
        ]);
  const emitted = kept.appended.map((message) => emit.messageCompleted(active.run_id, message));
  const finished = finishRun(kept.state, now, 'cancelled', stopping);
  return { state: finished.state, commands: [...commands, ...emitted, ...finished.commands] };
}

/** A tool step changed: once every call is in, it is committed and the model asked again, unless the run must stop. */
function afterToolStep(change: ToolStepChange, now: number): Transition {
  if (!change.done) return { state: change.state, commands: change.commands };
  const committed = commitToolStep(change.state, now);
  const commands = [...change.commands, ...committed.commands];
  const stop = stopAfterToolStep(committed.calls);
  if (stop === undefined) return beginModelStep(committed.state, now, commands);
  const finished = finishRun(committed.state, now, 'failed', stop);
  return { state: finished.state, commands: [...commands, ...finished.commands] };
}

/** Approvals changed the step: the run's `awaiting_approval` follows its pending calls. */
function afterApprovals(change: ToolStepChange, now: number): Transition {
  const runId = change.state.active?.run_id;
  if (change.commands.length === 0 || runId === undefined) return afterToolStep(change, now);
  return afterToolStep({ ...change, state: markAwaiting(change.state, runId, now) }, now);
}

/** A child's news: the answer of the call that spawned it, or a continuation run to queue. */
function afterChildNews(change: SubAgentChange, now: number): Transition {
  const { state, commands, answer, continuation } = change;
  if (continuation !== undefined) {
    const queued = submit(state, continuation, now, undefined, false);
    return { state: queued.state, commands: [...commands, ...queued.commands] };
  }
  if (answer === undefined) return { state, commands };
  const recorded = recordToolResult(state, answer.run_id, answer.tool_use_id, answer.outcome);
  return afterToolStep({ ...recorded, commands: [...commands, ...recorded.commands] }, now);
}

/**
 * Appends the assistant message and its results as one unit (the transcript invariant); the run
 * goes back to the model step. The active run's step must hold every call done.
 */
function commitToolStep(state: ThreadState, now: number): Transition & { calls: readonly DoneCall[] } {
  const active = state.active;
  if (active === null || active.step.kind !== 'tools') return { state, commands: [], calls: [] };
  const { assistant } = active.step;
  const calls = active.step.calls.filter((call): call is DoneCall => call.status === 'done');
  const appended = appendMessages(state, active.run_id, now, [
    { role: 'assistant', ...assistant },
    { role: 'user', content: calls.map((call) => call.result) },
  ]);
  return {
    state: { ...appended.state, active: { ...active, step: { kind: 'model' } } },
    commands: appended.appended
      .filter((message) => message.role === 'assistant')
      .map((message) => emit.messageCompleted(active.run_id, message)),
    calls,
  };
}

/**
 * A new input: its run is queued, and under `interrupt` the active run is cancelled for it (with
 * `keepPartial`, its model call keeps what it said, and the new run starts once that is in).
 */
function submit(
  state: ThreadState,
  input: SubmitInput,
  now: number,
  nextOffset: number | undefined,
  keepPartial: boolean,
): Transition {
  const queued = queueRun(state, input, now, nextOffset);
  if (input.multitask_strategy !== 'interrupt' || state.active === null) return queued;
  const why = { reason: 'superseded' as const, message: say.interruptedBy(input.run_id) };
  const interrupted = cancelRun(queued.state, state.active.run_id, now, why, keepPartial);
  return { state: interrupted.state, commands: [...queued.commands, ...interrupted.commands] };
}

/**
 * Cancels a queued run, or the active one: its unfinished calls get results saying why. With
 * `keepPartial`, an active run waiting on the model is told to stop and ends when the call has
 * (`modelStopped`), so what the model said so far is kept (decision 0370).
 */
function cancelRun(
  state: ThreadState,
  runId: string,
  now: number,
  why: { reason: StatusReason; message: string | undefined },
  keepPartial: boolean,
): Transition {
  const run = findRun(state, runId);
  if (run === undefined || isTerminal(run.status)) return unchanged(state);
  const error: RunError = { type: 'Cancelled', message: why.message ?? say.cancelledOnRequest };
  if (state.active?.run_id !== runId) return cancelQueuedRun(state, runId, now, why.reason, error);
  const active = state.active;
  if (keepPartial && active.step.kind === 'model') {
    if (active.step.stopping !== undefined) return unchanged(state);
    const stopping = { kind: 'model' as const, stopping: { reason: why.reason, error } };
    return {
      state: { ...state, active: { ...active, step: stopping } },
      commands: [{ type: 'cancelActivities', run_id: runId }],
    };
  }
  const interrupted = interruptToolStep(state, `cancelled: ${error.message}`);
  const committed = interrupted === undefined ? unchanged(state) : commitToolStep(interrupted, now);
  const finished = finishRun(committed.state, now, 'cancelled', { reason: why.reason, error });
  return {
    state: finished.state,
    commands: [{ type: 'cancelActivities', run_id: runId }, ...committed.commands, ...finished.commands],
  };
}

/**
 * Closes the thread: the active run and every queued one are cancelled. With `keepPartial` the
 * active run's model call keeps what it said, and the run ends once it has stopped.
 */
function closeThread(
  state: ThreadState,
  now: number,
  reason: string | undefined,
  keepPartial: boolean,
): Transition {
  if (state.closed) return unchanged(state);
  const message = reason ?? say.threadClosed;
  let transition: Transition = { state: { ...state, closed: true }, commands: [] };
  const pending = [
    ...(state.active === null ? [] : [state.active.run_id]),
    ...state.queue.map((q) => q.run_id),
  ];
  for (const runId of pending) {
    const why = { reason: 'thread_closed' as const, message };
    const cancelled = cancelRun(transition.state, runId, now, why, keepPartial);
    transition = { state: cancelled.state, commands: [...transition.commands, ...cancelled.commands] };
  }
  return transition;
}
