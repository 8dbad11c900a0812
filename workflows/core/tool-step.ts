/**
 * The tools half of a step, pure over the active run's step: the model's tool calls start (in
 * parallel) and get their results one by one. What a change comes to is a fact for the sequencer:
 * `done` once every call has its result, and the sequencer then commits the assistant message and
 * the results to the transcript together (sequencer.ts `commitToolStep`).
 */
import type { CallModelResult } from '../../common/activities';
import { truncateWithNote } from '../../common/limits';
import type { ToolFlags, ToolOutcome } from '../../common/tools';
import { toolUsesOf, type ToolUseBlock } from '../../common/transcript';
import { spawnAgentToolName } from '../../common/children';
import { gateFor, requestApproval } from './approval-gate';
import { childAllowance } from './budget';
import { spawnCommand, trackChildren } from './spawn';
import { emit } from './emit';
import {
  done,
  type ActiveRun,
  type CallApproval,
  type ThreadState,
  type DoneCall,
  type ToolCall,
} from './state';
import { boundedToolResult } from './transcript';
import type { Command, ToolFailure, Transition } from './transitions';
import { say } from './wording';

/**
 * A change to the tool step. `done`: every call of the active run's step has its result (the
 * state holds them), so the step is ready to commit and the model to be asked again, unless a
 * stop condition says otherwise.
 */
export type ToolStepChange = Transition & { done: boolean };

/** Characters of a tool's output copied into its `tool.completed` event. */
const eventPreviewChars = 4_000;

const still = (state: ThreadState, commands: Command[] = []): ToolStepChange => ({
  state,
  commands,
  done: false,
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
  transition: ToolStepChange,
  runId: string,
  refused: ReadonlyArray<[string, ToolOutcome]>,
): ToolStepChange {
  let next: ToolStepChange = {
    ...transition,
    state: trackChildren(transition.state, transition.commands),
  };
  for (const [toolUseId, outcome] of refused) {
    const recorded = recordToolResult(next.state, runId, toolUseId, outcome);
    next = { ...recorded, commands: [...next.commands, ...recorded.commands] };
  }
  return next;
}

export function startToolStep(
  state: ThreadState,
  active: ActiveRun,
  result: CallModelResult,
  now: number,
): ToolStepChange {
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
  const next = { ...state, active: { ...active, step: { kind: 'tools' as const, assistant, calls } } };
  if (allDone(calls)) return { state: next, commands, done: true };
  return afterStart(still(next, commands), active.run_id, refused);
}

/**
 * Gives the active run's call `toolUseId` its result (and, for a call a human answered, its
 * approval's outcome), `done` when that was the last call. Anything else is a late or repeated
 * report and changes nothing.
 */
export function recordToolResult(
  state: ThreadState,
  runId: string,
  toolUseId: string,
  outcome: ToolOutcome,
  approval?: CallApproval,
): ToolStepChange {
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
  const next = { ...state, active: { ...active, step: { ...active.step, calls } } };
  return { state: next, commands: [completed], done: allDone(calls) };
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
): ToolStepChange {
  const step = state.active?.step;
  const call =
    step?.kind === 'tools' ? step.calls.find((candidate) => candidate.use.id === toolUseId) : undefined;
  if (call === undefined) return still(state);
  const content =
    failure.timeout !== undefined && call.flags?.sideEffects === true
      ? say.interrupted(call.use.name, failure.timeout, failure.worker)
      : say.toolFailed(call.use.name, failure.message);
  return recordToolResult(state, runId, toolUseId, { is_error: true, content });
}

/**
 * Gives every call not yet done an error result saying why it stopped, so a cancelled or
 * interrupted run still leaves a valid transcript once the sequencer commits the step. Undefined
 * when the active run is not in a tool step.
 */
export function interruptToolStep(state: ThreadState, why: string): ThreadState | undefined {
  const active = state.active;
  if (active === null || active.step.kind !== 'tools') return undefined;
  const calls = active.step.calls.map((call): DoneCall => {
    if (call.status === 'done') return call;
    const mayHavePartlyRun = call.status === 'running' && call.flags.sideEffects;
    return done(call, boundedToolResult(call.use.id, say.didNotFinish(why, mayHavePartlyRun), true));
  });
  return { ...state, active: { ...active, step: { ...active.step, calls } } };
}
