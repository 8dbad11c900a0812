/**
 * The tools half of a step: the model's tool calls run (in parallel), and only when every call
 * has a result do the assistant message and the results enter the transcript, together.
 */
import type { CallModelResult } from '../../common/activities';
import type { ToolOutcome } from '../../common/tools';
import { toolUsesOf } from '../../common/transcript';
import { truncateWithNote } from '../../common/limits';
import { deniedByRuleMessage, gateFor, markAwaiting, requestApproval } from './approval-gate';
import type { ActiveRun, ConversationState, ToolCall } from './state';
import { appendMessages, boundedToolResult } from './transcript';
import type { Command, Transition } from './transitions';

/** `step: 'model'` tells the caller the tool step is over and the model must be asked again. */
export type ToolStepTransition = Transition & { step: 'tools' | 'model' };

/** Characters of a tool's output copied into its `tool.completed` event. */
const eventPreviewChars = 4_000;

export function startToolStep(
  state: ConversationState,
  result: CallModelResult,
  now: number,
): ToolStepTransition {
  const active = state.active!;
  const commands: Command[] = [];
  const calls: ToolCall[] = toolUsesOf(result.content).map((use, index) => {
    const flags = result.tools[use.name] ?? null;
    if (flags === null) {
      const known = Object.keys(result.tools);
      const message = `Unknown tool "${use.name}".${known.length > 0 ? ` This worker has: ${known.join(', ')}.` : ''}`;
      return { use, flags, result: boundedToolResult(use.id, message, true) };
    }
    const gate = gateFor(state.thread.config, use.name, flags);
    if (gate === 'deny')
      return { use, flags, result: boundedToolResult(use.id, deniedByRuleMessage(use.name), true) };
    if (gate === 'ask') {
      const requested = requestApproval(state, active, use, index, now);
      commands.push(...requested.commands);
      return { use, flags, approval: requested.approval };
    }
    commands.push(
      {
        type: 'emit',
        event: {
          event: 'tool.started',
          data: { run_id: active.run_id, tool_use_id: use.id, name: use.name, input: use.input },
        },
      },
      { type: 'runTool', run_id: active.run_id, use, flags },
    );
    return { use, flags };
  });
  const assistant = { content: result.content, model: result.model, stop_reason: result.stop_reason };
  const next = { ...state, active: { ...active, step: { kind: 'tools' as const, assistant, calls } } };
  if (calls.every((call) => call.result !== undefined)) {
    const committed = commitToolStep(next, now);
    return { ...committed, commands: [...commands, ...committed.commands], step: 'model' };
  }
  return { state: markAwaiting(next, active.run_id, now), commands, step: 'tools' };
}

export function recordToolResult(
  state: ConversationState,
  active: ActiveRun,
  toolUseId: string,
  outcome: ToolOutcome,
  now: number,
): ToolStepTransition {
  if (active.step.kind !== 'tools') return { state, commands: [], step: 'tools' };
  const call = active.step.calls.find((candidate) => candidate.use.id === toolUseId);
  if (call === undefined || call.result !== undefined) return { state, commands: [], step: 'tools' };
  const result = boundedToolResult(toolUseId, outcome.content, outcome.is_error);
  const calls = active.step.calls.map((candidate) =>
    candidate === call ? { ...candidate, result } : candidate,
  );
  const next = { ...state, active: { ...active, step: { ...active.step, calls } } };
  const completed: Command = {
    type: 'emit',
    event: {
      event: 'tool.completed',
      data: {
        run_id: active.run_id,
        tool_use_id: toolUseId,
        name: call.use.name,
        is_error: outcome.is_error,
        content: truncateWithNote(outcome.content, eventPreviewChars),
      },
    },
  };
  if (!calls.every((candidate) => candidate.result !== undefined))
    return { state: next, commands: [completed], step: 'tools' };
  const committed = commitToolStep(next, now);
  return { state: committed.state, commands: [completed, ...committed.commands], step: 'model' };
}

/**
 * Gives every call still running an error result saying why it stopped, and commits the step,
 * so a cancelled or interrupted run still leaves a valid transcript.
 */
export function interruptToolStep(state: ConversationState, now: number, why: string): Transition {
  const active = state.active;
  if (active === null || active.step.kind !== 'tools') return { state, commands: [] };
  const calls = active.step.calls.map((call) => {
    if (call.result !== undefined) return call;
    const started = call.approval === undefined || call.approval.status === 'approved';
    const note = call.flags?.sideEffects && started ? ' The tool may have partly run.' : '';
    return { ...call, result: boundedToolResult(call.use.id, `Tool did not finish (${why}).${note}`, true) };
  });
  return commitToolStep({ ...state, active: { ...active, step: { ...active.step, calls } } }, now);
}

/** Appends the assistant message and its results as one unit; the run goes back to the model step. */
function commitToolStep(state: ConversationState, now: number): Transition {
  const active = state.active!;
  if (active.step.kind !== 'tools') return { state, commands: [] };
  const { assistant, calls } = active.step;
  const results = calls.map((call) => call.result!);
  const appended = appendMessages(state, active.run_id, now, [
    { role: 'assistant', ...assistant },
    { role: 'user', content: results },
  ]);
  const next = { ...appended.state, active: { ...active, step: { kind: 'model' as const } } };
  const assistantMessage = appended.appended[0]!;
  return {
    state: next,
    commands: [
      {
        type: 'emit',
        event: { event: 'message.completed', data: { run_id: active.run_id, message: assistantMessage } },
      },
    ],
  };
}
