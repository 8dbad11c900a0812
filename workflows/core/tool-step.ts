/**
 * The tools half of a step: the model's tool calls run (in parallel), and only when every call
 * is done do the assistant message and the results enter the transcript, together.
 */
import type { CallModelResult } from '../../common/activities';
import { truncateWithNote } from '../../common/limits';
import type { ToolFlags, ToolOutcome } from '../../common/tools';
import { toolUsesOf, type ToolUseBlock } from '../../common/transcript';
import { spawnAgentToolName } from '../../common/children';
import { gateFor, markAwaiting, requestApproval } from './approval-gate';
import { childAllowance } from './budget';
import { spawnCommand, trackChildren } from './spawn';
import { emit } from './emit';
import {
  done,
  type ActiveRun,
  type CallApproval,
  type ThreadState,
  type DoneCall,
  type PendingAssistant,
  type ToolCall,
} from './state';
import { appendMessages, boundedToolResult } from './transcript';
import type { Command, ToolFailure, Transition } from './transitions';
import { say } from './wording';

/**
 * `step: 'model'` tells the caller the tool step is over (its calls, `committed`, are in the
 * transcript) and the model must be asked again, unless a stop condition says otherwise.
 */
export type ToolStepTransition = Transition &
  ({ step: 'tools' } | { step: 'model'; committed: readonly DoneCall[] });

/** Characters of a tool's output copied into its `tool.completed` event. */
const eventPreviewChars = 4_000;

const still = (state: ThreadState, commands: Command[] = []): ToolStepTransition => ({
  state,
  commands,
  step: 'tools',
});

const allDone = (calls: readonly ToolCall[]): calls is readonly DoneCall[] =>
  calls.every((call) => call.status === 'done');

/** The `runTool` command for a call: the activity's input, with a key that makes a repeat harmless. */
export function runToolCommand(
  state: ThreadState,
  runId: string,
  use: ToolUseBlock,
  flags: ToolFlags,
): Command {
  const threadId = state.thread.thread_id;
  const networkHosts = state.thread.config.network_hosts ?? [];
  return {
    type: 'runTool',
    run_id: runId,
    use,
    flags,
    input: {
      thread_id: threadId,
      run_id: runId,
      tool_use_id: use.id,
      name: use.name,
      input: use.input,
      idempotency_key: `${threadId}:${use.id}`,
      ...(networkHosts.length === 0 ? {} : { network_hosts: networkHosts }),
      ...(state.thread.config.memory === true ? { memory: { owner: state.thread.owner ?? '' } } : {}),
    },
  };
}

/**
 * The commands that start a call the model may make: `tool.started`, then its activity, or for
 * `spawn_agent` a child thread. `refusal`: the call cannot start, and is answered with this.
 */
export function startCall(
  state: ThreadState,
  runId: string,
  use: ToolUseBlock,
  flags: ToolFlags,
  now: number,
  siblings = 1,
): { commands: Command[]; refusal?: ToolOutcome } {
  const started = emit.toolStarted(runId, use);
  if (use.name !== spawnAgentToolName)
    return { commands: [started, runToolCommand(state, runId, use, flags)] };
  // Children spawned by one answer share what is left of the budget, so together they cannot
  // spend more than is left (decision 0425).
  const spawn = spawnCommand(state, runId, use, now, childAllowance(state, siblings));
  if ('refusal' in spawn) return { commands: [started], refusal: { is_error: true, content: spawn.refusal } };
  return { commands: [started, spawn.command] };
}

/** Records what a started call's commands imply: the children they start, the calls refused. */
export function afterStart(
  transition: ToolStepTransition,
  runId: string,
  refused: ReadonlyArray<[string, ToolOutcome]>,
  now: number,
): ToolStepTransition {
  let next: ToolStepTransition = {
    ...transition,
    state: trackChildren(transition.state, transition.commands),
  };
  for (const [toolUseId, outcome] of refused) {
    const recorded = recordToolResult(next.state, runId, toolUseId, outcome, now);
    next = { ...recorded, commands: [...next.commands, ...recorded.commands] };
  }
  return next;
}

export function startToolStep(
  state: ThreadState,
  active: ActiveRun,
  result: CallModelResult,
  now: number,
): ToolStepTransition {
  const commands: Command[] = [];
  const refused: Array<[string, ToolOutcome]> = [];
  const uses = toolUsesOf(result.content);
  const spawns = uses.filter((use) => use.name === spawnAgentToolName).length;
  const calls = uses.map((use, index): ToolCall => {
    const flags = result.tools[use.name];
    if (flags === undefined) {
      const message = say.unknownTool(use.name, Object.keys(result.tools));
      return { status: 'done', use, flags: null, result: boundedToolResult(use.id, message, true) };
    }
    const gate = gateFor(state.thread.config, use.name, flags);
    if (gate === 'deny')
      return {
        status: 'done',
        use,
        flags,
        result: boundedToolResult(use.id, say.deniedByRule(use.name), true),
      };
    if (gate === 'ask') {
      const requested = requestApproval(state, active, use, index, now);
      commands.push(...requested.commands);
      return { status: 'awaiting_approval', use, flags, approval: requested.approval };
    }
    const started = startCall(state, active.run_id, use, flags, now, spawns);
    commands.push(...started.commands);
    if (started.refusal !== undefined) refused.push([use.id, started.refusal]);
    return { status: 'running', use, flags };
  });
  const assistant = { content: result.content, model: result.model, stop_reason: result.stop_reason };
  if (allDone(calls)) {
    const committed = commitToolStep(state, active, assistant, calls, now);
    return { ...committed, commands: [...commands, ...committed.commands] };
  }
  const next = { ...state, active: { ...active, step: { kind: 'tools' as const, assistant, calls } } };
  return afterStart(still(markAwaiting(next, active.run_id, now), commands), active.run_id, refused, now);
}

/**
 * Gives the active run's call `toolUseId` its result (and, for a call a human answered, its
 * approval's outcome); commits the step when that was the last call. Anything else is a late
 * or repeated report and changes nothing.
 */
export function recordToolResult(
  state: ThreadState,
  runId: string,
  toolUseId: string,
  outcome: ToolOutcome,
  now: number,
  approval?: CallApproval,
): ToolStepTransition {
  const active = state.active;
  if (active === null || active.run_id !== runId || active.step.kind !== 'tools') return still(state);
  const call = active.step.calls.find((candidate) => candidate.use.id === toolUseId);
  if (call === undefined || call.status === 'done') return still(state);
  const result = boundedToolResult(toolUseId, outcome.content, outcome.is_error);
  const answered = done(call, result, approval);
  const calls = active.step.calls.map((candidate) => (candidate === call ? answered : candidate));
  const completed = emit.toolCompleted(
    runId,
    call.use,
    outcome.is_error,
    truncateWithNote(outcome.content, eventPreviewChars),
  );
  if (!allDone(calls)) {
    const next = { ...state, active: { ...active, step: { ...active.step, calls } } };
    return still(next, [completed]);
  }
  const committed = commitToolStep(state, active, active.step.assistant, calls, now);
  return { ...committed, commands: [completed, ...committed.commands] };
}

/**
 * A tool's activity failed. Keel writes its result: a side-effecting call whose worker stopped
 * had one attempt only, so it may have partly run and is not run again.
 */
export function recordToolFailure(
  state: ThreadState,
  runId: string,
  toolUseId: string,
  failure: ToolFailure,
  now: number,
): ToolStepTransition {
  const step = state.active?.step;
  const call =
    step?.kind === 'tools' ? step.calls.find((candidate) => candidate.use.id === toolUseId) : undefined;
  if (call === undefined) return still(state);
  const content =
    failure.timeout !== undefined && call.flags?.sideEffects === true
      ? say.interrupted(call.use.name, failure.timeout, failure.worker)
      : say.toolFailed(call.use.name, failure.message);
  return recordToolResult(state, runId, toolUseId, { is_error: true, content }, now);
}

/**
 * Gives every call not yet done an error result saying why it stopped, and commits the step,
 * so a cancelled or interrupted run still leaves a valid transcript.
 */
export function interruptToolStep(state: ThreadState, now: number, why: string): Transition {
  const active = state.active;
  if (active === null || active.step.kind !== 'tools') return { state, commands: [] };
  const calls = active.step.calls.map((call): DoneCall => {
    if (call.status === 'done') return call;
    const mayHavePartlyRun = call.status === 'running' && call.flags.sideEffects;
    return done(call, boundedToolResult(call.use.id, say.didNotFinish(why, mayHavePartlyRun), true));
  });
  return commitToolStep(state, active, active.step.assistant, calls, now);
}

/** Appends the assistant message and its results as one unit; the run goes back to the model step. */
function commitToolStep(
  state: ThreadState,
  active: ActiveRun,
  assistant: PendingAssistant,
  calls: readonly DoneCall[],
  now: number,
): ToolStepTransition {
  const appended = appendMessages(state, active.run_id, now, [
    { role: 'assistant', ...assistant },
    { role: 'user', content: calls.map((call) => call.result) },
  ]);
  return {
    state: { ...appended.state, active: { ...active, step: { kind: 'model' } } },
    commands: appended.appended
      .filter((message) => message.role === 'assistant')
      .map((message) => emit.messageCompleted(active.run_id, message)),
    step: 'model',
    committed: calls,
  };
}
