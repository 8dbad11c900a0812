/**
 * The agent state machine: `(state, event) → { state, commands }`, pure and deterministic.
 * The workflow interprets the commands; tests drive this function directly.
 */
import { limits, truncateWithNote } from '../common/limits';
import type { Run, RunError, RunStatus, StatusReason } from '../common/run';
import { isTerminal } from '../common/run';
import type { SubmitInput } from '../common/messages';
import { textOf, toolUsesOf } from '../common/transcript';
import { addUsage } from '../common/usage';
import type { ConversationState, QueuedRun } from './state';
import { findRun } from './state';
import { decideApproval, expireApproval, stepTimedOut } from './approvals';
import { budgetExceeded, exceededEvent, updateLimits, warnIfNear } from './budget';
import { rollUpChildUsage } from './child-usage';
import { interruptToolStep, startToolStep, recordToolResult, type ToolStepTransition } from './tool-step';
import { newRun, refuseInput } from './intake';
import { appendMessages } from './transcript';
import type { Command, ConversationEvent, Transition } from './transitions';
import { sessionSummary } from './views';

const unchanged = (state: ConversationState): Transition => ({ state, commands: [] });

export function reduce(state: ConversationState, event: ConversationEvent): Transition {
  const touched = { ...state, updated_at: new Date(event.now).toISOString() };
  const transition = apply(touched, event);
  // An event that changes nothing (a late retry, a duplicate) leaves the state exactly as it was.
  return transition.state === touched && transition.commands.length === 0 ? unchanged(state) : transition;
}

function apply(state: ConversationState, event: ConversationEvent): Transition {
  switch (event.type) {
    case 'inputSubmitted':
      return submit(state, event.input, event.now, event.next_offset);
    case 'inputRefused':
      return refuseInput(state, event.input, event.refusal, event.now, event.next_offset);
    case 'modelResponded':
      return modelResponded(state, event);
    case 'modelFailed': {
      if (!isCurrentModelStep(state, event.run_id, event.step)) return unchanged(state);
      return finishRun(state, event.now, 'failed', { reason: 'model_error', error: event.error });
    }
    case 'toolFinished': {
      const active = state.active;
      if (active === null || active.run_id !== event.run_id || active.step.kind !== 'tools')
        return unchanged(state);
      const done = recordToolResult(state, active, event.tool_use_id, event.outcome, event.now);
      return afterToolStep(done, stepTimedOut(active), event.now);
    }
    case 'approvalDecided':
      return afterToolStep(
        decideApproval(state, event.decision, event.now),
        stepTimedOut(state.active),
        event.now,
      );
    case 'approvalExpired':
      return afterToolStep(expireApproval(state, event.approval_id, event.now), true, event.now);
    case 'limitsUpdated':
      return updateLimits(state, event.limits);
    case 'runDeleted': {
      const run = findRun(state, event.run_id);
      if (run === undefined || !isTerminal(run.status)) return unchanged(state);
      return { state: { ...state, runs: state.runs.filter((kept) => kept !== run) }, commands: [] };
    }
    case 'metadataPatched': {
      const metadata = { ...state.thread.metadata, ...event.metadata };
      return { state: { ...state, thread: { ...state.thread, metadata } }, commands: [] };
    }
    case 'cancelRequested':
      return cancel(state, event.run_id, event.now, { reason: 'cancelled_by_user', message: event.reason });
    case 'runDeferred': {
      const run = findRun(state, event.run_id);
      if (run === undefined || isTerminal(run.status) || run.status === 'deferred') return unchanged(state);
      return updateRun(state, event.run_id, event.now, { status: 'deferred' }, 'run.deferred');
    }
    case 'closeRequested':
      return close(state, event.now, event.reason);
    case 'childUsageReported': {
      // A child's spend counts against this thread's budget, warning here at 80 % like our own.
      const rolled = rollUpChildUsage(state, event);
      const warned = warnIfNear(rolled.state, event.run_id);
      return { state: warned.state, commands: [...rolled.commands, ...warned.commands] };
    }
  }
}

function submit(
  state: ConversationState,
  input: SubmitInput,
  now: number,
  nextOffset: number | undefined,
): Transition {
  const run = newRun(state, input, now, nextOffset);
  const runs = [...state.runs, run].slice(-limits.runsKept);
  let transition: Transition = {
    state: { ...state, runs, queue: [...state.queue, queuedOf(input)] },
    commands: [{ type: 'emit', event: { event: 'run.created', data: { run } } }],
  };
  if (input.multitask_strategy === 'interrupt' && state.active !== null) {
    const interrupted = cancel(transition.state, state.active.run_id, now, {
      reason: 'superseded',
      message: `interrupted by run ${run.run_id}`,
    });
    transition = { state: interrupted.state, commands: [...transition.commands, ...interrupted.commands] };
  }
  return startNextRun(transition.state, now, transition.commands);
}

const queuedOf = (input: SubmitInput): QueuedRun => ({
  run_id: input.run_id,
  content: input.content,
  ...(input.config === undefined ? {} : { config: input.config }),
});

/** Starts the oldest queued run when nothing is active. */
function startNextRun(state: ConversationState, now: number, commands: Command[]): Transition {
  const next = state.queue[0];
  if (state.active !== null || state.closed || next === undefined) return { state, commands };
  const run = findRun(state, next.run_id);
  const queued = { ...state, queue: state.queue.slice(1) };
  if (run === undefined) return startNextRun(queued, now, commands);
  // A run through an assistant configures the thread from this run on.
  const config = next.config ?? queued.thread.config;
  const withInput = appendMessages({ ...queued, thread: { ...queued.thread, config } }, run.run_id, now, [
    { role: 'user', content: next.content },
  ]);
  const started = updateRun(
    {
      ...withInput.state,
      active: { run_id: run.run_id, steps: 0, step: { kind: 'model' }, started_at_ms: now, model: run.model },
    },
    run.run_id,
    now,
    { status: run.status === 'deferred' ? 'deferred' : 'running', started_at: new Date(now).toISOString() },
    'run.started',
  );
  return beginModelStep(started.state, now, [...commands, ...started.commands]);
}

/**
 * After a tool step changed: when it is complete, the model is asked again, unless a call ran
 * out of approval time, which ends the run (the thread then waits for the user).
 */
function afterToolStep(done: ToolStepTransition, timedOut: boolean, now: number): Transition {
  if (done.step !== 'model') return done;
  if (!timedOut) return beginModelStep(done.state, now, done.commands);
  const error: RunError = {
    type: 'ApprovalTimeout',
    message: 'a tool call was not approved in time; send a message to continue',
  };
  const finished = finishRun(done.state, now, 'failed', { reason: 'approval_timeout', error });
  return { state: finished.state, commands: [...done.commands, ...finished.commands] };
}

/** Asks the model for the next step, unless the run has used all the steps or the budget it may. */
function beginModelStep(state: ConversationState, now: number, commands: Command[]): Transition {
  const active = state.active!;
  const overBudget = budgetExceeded(state);
  if (overBudget !== undefined) {
    const finished = finishRun(state, now, 'failed', { reason: 'budget_exceeded', error: overBudget });
    return {
      state: finished.state,
      commands: [...commands, exceededEvent(state, active.run_id), ...finished.commands],
    };
  }
  const maxSteps = state.thread.config.max_steps;
  if (active.steps >= maxSteps) {
    const error: RunError = {
      type: 'MaxStepsReached',
      message: `the run reached its limit of ${maxSteps} model calls`,
    };
    const finished = finishRun(state, now, 'failed', { reason: 'max_steps', error });
    return { state: finished.state, commands: [...commands, ...finished.commands] };
  }
  const steps = active.steps + 1;
  const next = { ...state, active: { ...active, steps, step: { kind: 'model' as const } } };
  return { state: next, commands: [...commands, { type: 'callModel', run_id: active.run_id, step: steps }] };
}

export function isCurrentModelStep(state: ConversationState, runId: string, step: number): boolean {
  const active = state.active;
  return active !== null && active.run_id === runId && active.steps === step && active.step.kind === 'model';
}

function modelResponded(
  state: ConversationState,
  event: Extract<ConversationEvent, { type: 'modelResponded' }>,
): Transition {
  if (!isCurrentModelStep(state, event.run_id, event.step)) return unchanged(state);
  const { result, now, run_id } = event;
  const run = findRun(state, run_id)!;
  const usage = addUsage(run.usage, result.usage);
  const counted = updateRun(
    {
      ...state,
      usage: addUsage(state.usage, result.usage),
      totals: { ...state.totals, steps: state.totals.steps + 1 },
    },
    run_id,
    now,
    { usage, steps: event.step },
  );
  const warned = warnIfNear(counted.state, run_id);
  // The call's last streamed text, which the activity left for us to publish, comes first.
  const tail = result.unpublished_delta;
  const commands: Command[] = [
    ...(tail === undefined || tail.text === ''
      ? []
      : [
          {
            type: 'emit' as const,
            event: {
              event: 'message.delta' as const,
              data: { run_id, step: event.step, attempt: tail.attempt, text: tail.text },
            },
          },
        ]),
    ...counted.commands,
    {
      type: 'emit',
      event: { event: 'usage.updated', data: { run_id, usage, thread_usage: counted.state.usage } },
    },
    ...warned.commands,
  ];
  const wantsTools = toolUsesOf(result.content).length > 0;
  if (
    wantsTools &&
    (result.stop_reason === 'tool_use' ||
      result.stop_reason === 'end_turn' ||
      result.stop_reason === 'pause_turn')
  ) {
    const started = startToolStep(warned.state, result, now);
    if (started.step === 'model')
      return beginModelStep(started.state, now, [...commands, ...started.commands]);
    return { state: started.state, commands: [...commands, ...started.commands] };
  }
  // Refusals and truncated answers keep their text but never their tool calls: a cut-off
  // tool_use may be malformed, and a refusal must not act.
  const content = result.content.filter((block) => block.type === 'text' && block.text !== '');
  const appended =
    content.length === 0
      ? { state: warned.state, appended: [] }
      : appendMessages(warned.state, run_id, now, [
          { role: 'assistant', content, model: result.model, stop_reason: result.stop_reason },
        ]);
  const emitted: Command[] = appended.appended.map((message) => ({
    type: 'emit',
    event: { event: 'message.completed', data: { run_id, message } },
  }));
  if (result.stop_reason === 'pause_turn')
    return beginModelStep(appended.state, now, [...commands, ...emitted]);
  const reason: StatusReason | undefined =
    result.stop_reason === 'refusal'
      ? 'refusal'
      : result.stop_reason === 'max_tokens'
        ? 'max_tokens'
        : undefined;
  const finished = finishRun(appended.state, now, 'completed', {
    output: textOf(content),
    ...(reason === undefined ? {} : { reason }),
  });
  return { state: finished.state, commands: [...commands, ...emitted, ...finished.commands] };
}

interface Ending {
  reason?: StatusReason;
  error?: RunError;
  output?: string;
}

/** Ends the active run, writes a notice for failures, and starts the next queued run. */
export function finishRun(
  state: ConversationState,
  now: number,
  status: 'completed' | 'failed' | 'cancelled',
  ending: Ending,
): Transition {
  const active = state.active!;
  let next: ConversationState = {
    ...state,
    active: null,
    totals: {
      ...state.totals,
      runs: state.totals.runs + 1,
      duration_ms: state.totals.duration_ms + Math.max(0, now - active.started_at_ms),
    },
  };
  if (ending.error !== undefined && status === 'failed') {
    const text = `The run failed: ${ending.error.message}`;
    next = appendMessages(next, active.run_id, now, [
      { role: 'assistant', content: [{ type: 'text', text }], model: 'keel', stop_reason: 'end_turn' },
    ]).state;
  }
  const ended = updateRun(
    next,
    active.run_id,
    now,
    {
      status,
      ended_at: new Date(now).toISOString(),
      ...(ending.reason === undefined ? {} : { status_reason: ending.reason }),
      ...(ending.error === undefined ? {} : { error: ending.error }),
      ...(ending.output === undefined
        ? {}
        : { output: truncateWithNote(ending.output, limits.runOutputChars) }),
      summary: sessionSummary(next),
    },
    `run.${status}`,
  );
  return startNextRun(ended.state, now, ended.commands);
}

function cancel(
  state: ConversationState,
  runId: string,
  now: number,
  why: { reason: StatusReason; message: string | undefined },
): Transition {
  const run = findRun(state, runId);
  if (run === undefined || isTerminal(run.status)) return unchanged(state);
  const error: RunError = { type: 'Cancelled', message: why.message ?? 'cancelled on request' };
  if (state.active?.run_id !== runId) {
    const dequeued = { ...state, queue: state.queue.filter((queued) => queued.run_id !== runId) };
    return updateRun(
      dequeued,
      runId,
      now,
      { status: 'cancelled', status_reason: why.reason, error, ended_at: new Date(now).toISOString() },
      'run.cancelled',
    );
  }
  const interrupted = interruptToolStep(state, now, `cancelled: ${error.message}`);
  const finished = finishRun(interrupted.state, now, 'cancelled', { reason: why.reason, error });
  return {
    state: finished.state,
    commands: [{ type: 'cancelActivities', run_id: runId }, ...interrupted.commands, ...finished.commands],
  };
}

function close(state: ConversationState, now: number, reason: string | undefined): Transition {
  if (state.closed) return unchanged(state);
  const message = reason ?? 'the thread was closed';
  let transition: Transition = { state: { ...state, closed: true }, commands: [] };
  const pending = [
    ...(state.active === null ? [] : [state.active.run_id]),
    ...state.queue.map((q) => q.run_id),
  ];
  for (const runId of pending) {
    const cancelled = cancel(transition.state, runId, now, { reason: 'thread_closed', message });
    transition = { state: cancelled.state, commands: [...transition.commands, ...cancelled.commands] };
  }
  return transition;
}

/** Applies `changes` to a run and optionally emits a run event carrying the updated run. */
export function updateRun(
  state: ConversationState,
  runId: string,
  now: number,
  changes: Partial<Omit<Run, 'run_id' | 'thread_id'>> & { status?: RunStatus },
  event?: 'run.started' | 'run.deferred' | 'run.completed' | 'run.failed' | 'run.cancelled',
): Transition {
  let updated: Run | undefined;
  const runs = state.runs.map((run) => {
    if (run.run_id !== runId) return run;
    updated = { ...run, ...changes, updated_at: new Date(now).toISOString() };
    return updated;
  });
  const commands: Command[] =
    event === undefined || updated === undefined
      ? []
      : [{ type: 'emit', event: { event, data: { run: updated } } }];
  return { state: { ...state, runs }, commands };
}
