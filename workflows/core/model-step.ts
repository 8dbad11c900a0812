/**
 * The model half of a step: ask the model (unless a stop condition ends the run first), then act
 * on its answer: run the tools it asks for, go on after a pause, or end the run with its text.
 */
import {
  appendedMessagesLimit,
  inlineMessagesLimit,
  type AppendedMessages,
  type CallModelInput,
} from '../../common/activities';
import { type ModelMessage, textOf, toolUsesOf } from '../../common/transcript';
import { FailureType, isFailureType } from '../../common/failures';
import { addUsage } from '../../common/usage';
import { budgetLeft, exceededEvent, quotaBinds, warnIfNear } from './budget';
import { rollUpChildUsage } from './child-usage';
import { emit } from './emit';
import { finishRun, unchanged, updateRun } from './run-lifecycle';
import { findRun, transcriptRevision, type ActiveRun, type Stopping, type ThreadState } from './state';
import {
  completionReason,
  continuesTurn,
  runsTools,
  stopAfterToolStep,
  stopBeforeModelCall,
} from './stop-conditions';
import { startToolStep, type ToolStepTransition } from './tool-step';
import { appendMessages, modelMessages } from './transcript';
import { say } from './wording';
import type { Command, ConversationEvent, Transition } from './transitions';

/** The active run, when `step` of run `runId` is the model call it waits for. */
function currentModelStep(state: ThreadState, runId: string, step: number): ActiveRun | undefined {
  const active = state.active;
  const current =
    active !== null && active.run_id === runId && active.steps === step && active.step.kind === 'model';
  return current ? active : undefined;
}

export const isCurrentModelStep = (state: ThreadState, runId: string, step: number): boolean =>
  currentModelStep(state, runId, step) !== undefined;

/**
 * Whether `JSON.stringify(messages).length <= limit`, serializing no more than that many
 * characters' worth of messages (a long conversation's every step would otherwise serialize all
 * of it).
 */
function fitsIn(messages: readonly ModelMessage[], limit: number): boolean {
  // "[" + each message and its "," or "]": the array's JSON length, counted until it is too long.
  let chars = messages.length === 0 ? 2 : 1;
  for (const message of messages) {
    chars += JSON.stringify(message).length + 1;
    if (chars > limit) return false;
  }
  return chars <= limit;
}

/**
 * The messages from the model's previous answer on: what a worker that ran the previous call
 * (and holds what it sent) lacks. The previous call was sent everything before its answer, and
 * the transcript only grows at its end, so a worker holding that under the same revision holds
 * this call's first `from` messages. Absent when they are too large to write into the history
 * at every step (a large tool output): the activity reads them from the workflow then.
 */
function appendedSincePreviousCall(
  state: ThreadState,
  messages: readonly ModelMessage[],
): AppendedMessages | undefined {
  let from = messages.length - 1;
  while (from > 0 && messages[from]?.role !== 'assistant') from--;
  const appended = messages.slice(Math.max(0, from));
  if (!fitsIn(appended, appendedMessagesLimit)) return undefined;
  return { from: Math.max(0, from), revision: transcriptRevision(state), messages: appended };
}

/**
 * The model call for a step. A long conversation stays out of the input (and so out of the
 * history at every step): only what was appended since the previous call travels, and the
 * activity asks the workflow for the rest unless its worker holds it. A call that streams no
 * deltas always brings its messages: it runs as a local activity, whose input is never written
 * to the history, and which could not ask its workflow while the workflow waits on it.
 */
export function callModelCommand(state: ThreadState, active: ActiveRun, step: number): Command {
  const { thread_id, config } = state.thread;
  const messages = modelMessages(state);
  const quiet = active.deltas === false;
  const inline = quiet || fitsIn(messages, inlineMessagesLimit);
  const appended = inline ? undefined : appendedSincePreviousCall(state, messages);
  const left = budgetLeft(state);
  const budget = left !== undefined && quotaBinds(state) ? { ...left, ceiling: 'quota' as const } : left;
  const input: CallModelInput = {
    thread_id,
    run_id: active.run_id,
    step,
    model: active.model,
    ...(inline ? { messages } : {}),
    ...(appended === undefined ? {} : { appended }),
    ...(config.system === undefined ? {} : { system: config.system }),
    ...(quiet ? { deltas: false as const } : {}),
    ...(budget === undefined ? {} : { budget }),
    ...(config.memory === true ? { memory: true as const } : {}),
  };
  return { type: 'callModel', run_id: active.run_id, step, input };
}

/** Asks the model for the next step, unless the run has used all the steps or the budget it may. */
export function beginModelStep(state: ThreadState, now: number, commands: Command[]): Transition {
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

/** A tool step changed: once it is complete the model is asked again, unless the run must stop. */
export function afterToolStep(done: ToolStepTransition, now: number): Transition {
  if (done.step === 'tools') return done;
  const stop = stopAfterToolStep(done.committed);
  if (stop === undefined) return beginModelStep(done.state, now, done.commands);
  const finished = finishRun(done.state, now, 'failed', stop);
  return { state: finished.state, commands: [...done.commands, ...finished.commands] };
}

export function modelResponded(
  state: ThreadState,
  event: Extract<ConversationEvent, { type: 'modelResponded' }>,
): Transition {
  const { result, now, run_id, step } = event;
  const active = currentModelStep(state, run_id, step);
  const run = findRun(state, run_id);
  if (active === undefined || run === undefined) return unchanged(state);
  const usage = addUsage(run.usage, result.usage);
  const totals = { ...state.totals, steps: state.totals.steps + 1 };
  const counted = updateRun({ ...state, usage: addUsage(state.usage, result.usage), totals }, run_id, now, {
    usage,
    steps: step,
  });
  const warned = warnIfNear(counted.state, run_id);
  const stopping = active.step.kind === 'model' ? active.step.stopping : undefined;
  // The call's last streamed text, which the activity left for us to publish, comes first; or,
  // when it streamed live, all of it once, for the streams that missed some (decision 0340).
  const tail = result.unpublished_delta;
  const streamed = result.streamed;
  const whole = streamed === undefined ? '' : (streamed.text ?? textOf(result.content));
  const commands: Command[] = [
    ...(tail === undefined || tail.text === ''
      ? []
      : [emit.messageDelta(run_id, step, tail.attempt, tail.text)]),
    ...(streamed === undefined || whole === ''
      ? []
      : [emit.messageDelta(run_id, step, streamed.attempt, whole, true)]),
    ...counted.commands,
    emit.usageUpdated(run_id, usage, counted.state.usage),
    ...warned.commands,
  ];
  // Stopped, but the answer came first: it is kept as far as its text goes, as a stopped answer.
  if (stopping !== undefined)
    return endStopped(warned.state, active, stopping, textOf(result.content), now, commands);
  if (runsTools(result, toolUsesOf(result.content).length > 0)) {
    const started = startToolStep(warned.state, active, result, now);
    return afterToolStep({ ...started, commands: [...commands, ...started.commands] }, now);
  }
  // Refusals and truncated answers keep their text but never their tool calls.
  const content = result.content.filter((block) => block.type === 'text' && block.text !== '');
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
 * so the ledger keeps what was paid for; a call the activity refused because not even a minimal
 * answer fits what is left ends the run as the budget check before a call does (decision 0425).
 */
export function modelFailed(
  state: ThreadState,
  { run_id, step, error, billed, now }: Extract<ConversationEvent, { type: 'modelFailed' }>,
): Transition {
  if (!isCurrentModelStep(state, run_id, step)) return unchanged(state);
  const charged = billed === undefined ? unchanged(state) : rollUpChildUsage(state, run_id, billed, now);
  const then = (next: Transition): Transition => ({
    state: next.state,
    commands: [...charged.commands, ...next.commands],
  });
  // A call told to stop that failed instead ends the run as the Stop asked, with no text.
  const stopping = stoppingOf(charged.state);
  if (stopping !== undefined) return then(finishRun(charged.state, now, 'cancelled', stopping));
  if (error.type === FailureType.budgetExceeded) {
    const notice = exceededEvent(charged.state, run_id);
    // The run's share of its owner's quota was the lesser ceiling: the quota refused the call.
    const quota = quotaBinds(charged.state);
    const finished = finishRun(charged.state, now, 'failed', {
      reason: quota ? 'quota_exceeded' : 'budget_exceeded',
      error: quota
        ? { type: FailureType.quotaExceeded, message: `${say.quotaShare}: ${error.message}` }
        : { type: FailureType.budgetExceeded, message: error.message },
    });
    return then({ state: finished.state, commands: [notice, ...finished.commands] });
  }
  const type = isFailureType(error.type) ? error.type : FailureType.internal;
  return then(
    finishRun(charged.state, now, 'failed', {
      reason: 'model_error',
      error: { type, message: error.message },
    }),
  );
}

/** How the active run's model step is being stopped, if it is. */
export function stoppingOf(state: ThreadState): Stopping | undefined {
  const step = state.active?.step;
  return step?.kind === 'model' ? step.stopping : undefined;
}

/** The model call told to stop has: its text becomes the run's stopped answer, and the run ends. */
export function modelStopped(
  state: ThreadState,
  { run_id, step, text, now, streamed, billed }: Extract<ConversationEvent, { type: 'modelStopped' }>,
): Transition {
  const current = currentModelStep(state, run_id, step);
  if (current === undefined || stoppingOf(state) === undefined) return unchanged(state);
  // What the stopped call was billed is charged first, so the ledger keeps what was paid for
  // (decision 0425).
  const charged = billed === undefined ? unchanged(state) : rollUpChildUsage(state, run_id, billed, now);
  const stopped = stoppedAfterCharge(charged.state, run_id, step, text, now, streamed);
  return { state: stopped.state, commands: [...charged.commands, ...stopped.commands] };
}

function stoppedAfterCharge(
  state: ThreadState,
  run_id: string,
  step: number,
  text: string,
  now: number,
  streamed: { attempt: number } | undefined,
): Transition {
  const active = currentModelStep(state, run_id, step);
  const stopping = stoppingOf(state);
  if (active === undefined || stopping === undefined) return unchanged(state);
  // A live stream may not have read the last pieces before the call stopped: the whole text, once,
  // brings them, as it does for an answer. Only a call that says it streamed live logs it, so a
  // history recorded before this replays the same log.
  const whole =
    streamed === undefined || text === ''
      ? []
      : [emit.messageDelta(run_id, step, streamed.attempt, text, true)];
  return endStopped(state, active, stopping, text, now, whole);
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
