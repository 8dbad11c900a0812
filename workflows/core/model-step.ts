/**
 * The model half of a step, pure: the `callModel` command a step makes, and what an answer, a
 * failure or a stopped call comes to. The sequencer (sequencer.ts) acts on it: it counts the
 * answer, runs the tools it asks for, goes on after a pause, or ends the run.
 */
import {
  appendedMessagesLimit,
  inlineMessagesLimit,
  type AppendedMessages,
  type CallModelInput,
  type CallModelResult,
} from '../../common/activities';
import { textOf, type AssistantContent, type ModelMessage } from '../../common/transcript';
import { FailureType, isFailureType } from '../../common/failures';
import { addUsage } from '../../common/usage';
import { budgetLeft, exceededEvent, quotaBinds } from './budget';
import { emit } from './emit';
import { transcriptRevision, type ActiveRun, type Stopping, type ThreadState } from './state';
import type { Stop } from './stop-conditions';
import { modelMessages } from './transcript';
import { say } from './wording';
import type { Command } from './transitions';

/** The active run, when `step` of run `runId` is the model call it waits for. */
export function currentModelStep(state: ThreadState, runId: string, step: number): ActiveRun | undefined {
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

/** The thread's count of an answer: its usage, and one more model step. */
export function countAnswer(state: ThreadState, result: CallModelResult): ThreadState {
  const totals = { ...state.totals, steps: state.totals.steps + 1 };
  return { ...state, usage: addUsage(state.usage, result.usage), totals };
}

/**
 * The answer's text for streams: its last streamed text, which the activity left for us to
 * publish, comes first; or, when it streamed live, all of it once, for the streams that missed
 * some (decision 0340).
 */
export function answerDeltas(result: CallModelResult, runId: string, step: number): Command[] {
  const tail = result.unpublished_delta;
  const streamed = result.streamed;
  const whole = streamed === undefined ? '' : (streamed.text ?? textOf(result.content));
  return [
    ...(tail === undefined || tail.text === ''
      ? []
      : [emit.messageDelta(runId, step, tail.attempt, tail.text)]),
    ...(streamed === undefined || whole === ''
      ? []
      : [emit.messageDelta(runId, step, streamed.attempt, whole, true)]),
  ];
}

/** Refusals and truncated answers keep their text but never their tool calls. */
export const keptContent = (result: CallModelResult): AssistantContent[] =>
  result.content.filter((block) => block.type === 'text' && block.text !== '');

/**
 * How a model call that failed after Temporal's retries ends the run: a call the activity refused
 * because not even a minimal answer fits what is left ends it as the budget check before a call
 * does (decision 0425), with its notice; any other failure with its type when Keel knows it.
 */
export function modelFailure(
  state: ThreadState,
  runId: string,
  error: { type?: string | undefined; message: string },
): { stop: Stop; notice: Command[] } {
  if (error.type === FailureType.budgetExceeded) {
    // The run's share of its owner's quota was the lesser ceiling: the quota refused the call.
    const quota = quotaBinds(state);
    return {
      notice: [exceededEvent(state, runId)],
      stop: {
        reason: quota ? 'quota_exceeded' : 'budget_exceeded',
        error: quota
          ? { type: FailureType.quotaExceeded, message: `${say.quotaShare}: ${error.message}` }
          : { type: FailureType.budgetExceeded, message: error.message },
      },
    };
  }
  const type = isFailureType(error.type) ? error.type : FailureType.internal;
  return { notice: [], stop: { reason: 'model_error', error: { type, message: error.message } } };
}

/** How the active run's model step is being stopped, if it is. */
export function stoppingOf(state: ThreadState): Stopping | undefined {
  const step = state.active?.step;
  return step?.kind === 'model' ? step.stopping : undefined;
}

/**
 * A stopped call's text for streams: a live stream may not have read the last pieces before the
 * call stopped, so the whole text, once, brings them, as it does for an answer. Only a call that
 * says it streamed live logs it, so a history recorded before this replays the same log.
 */
export const stoppedDeltas = (
  runId: string,
  step: number,
  text: string,
  streamed: { attempt: number } | undefined,
): Command[] =>
  streamed === undefined || text === '' ? [] : [emit.messageDelta(runId, step, streamed.attempt, text, true)];
