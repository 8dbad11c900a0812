/**
 * Human checkpoints, pure. A call that needs approval waits in the tools step (no `runTool`)
 * with a pending approval and a durable timer; approving runs it, denying or expiring answers
 * it with an `is_error` result, so the transcript invariant holds whatever the human does.
 */
import type { DecideApprovalInput, PendingApproval } from '../common/approvals';
import type { ToolUseBlock } from '../common/transcript';
import { markAwaiting, pendingCalls } from './approval-gate';
import type { Rejection } from './validate';
import type { ActiveRun, CallApproval, ConversationState } from './state';
import { recordToolResult, type ToolStepTransition } from './tool-step';
import type { Command } from './transitions';

export function pendingApprovals(state: ConversationState): PendingApproval[] {
  const runId = state.active?.run_id ?? '';
  return pendingCalls(state).map((call) => ({
    approval_id: call.approval!.approval_id,
    run_id: runId,
    tool_use_id: call.use.id,
    tool: call.use.name,
    input: call.use.input,
    requested_at: call.approval!.requested_at,
    expires_at: call.approval!.expires_at,
  }));
}

export function validateDecision(
  state: ConversationState,
  input: DecideApprovalInput,
): Rejection | undefined {
  if (input.decision !== 'approve' && input.decision !== 'deny')
    return { type: 'InvalidInput', message: 'decision must be "approve" or "deny"' };
  if (pendingCalls(state).some((call) => call.approval?.approval_id === input.approval_id)) return undefined;
  if (couldHaveBeenRequested(state, input.approval_id))
    return {
      type: 'ApprovalNotPending',
      message: `approval ${input.approval_id} is not pending (it was decided, expired, or its run ended)`,
    };
  const threadId = state.thread.thread_id;
  return {
    type: 'ApprovalNotFound',
    message: `approval ${input.approval_id} not found on thread ${threadId}; GET /threads/${threadId}/approvals lists the pending ones`,
  };
}

/**
 * Approval ids are `<run_id>.<step>.<call>` (see `requestApproval`): an id naming a step that a
 * known run reached may have been pending once; any other id never was.
 */
function couldHaveBeenRequested(state: ConversationState, approvalId: string): boolean {
  const match = /^(.+)\.(\d+)\.(\d+)$/.exec(approvalId);
  if (match === null) return false;
  const run = state.runs.find((candidate) => candidate.run_id === match[1]);
  return run !== undefined && Number(match[2]) <= run.steps && Number(match[3]) >= 1;
}

/** True when a call of the active step ran out of time: the run ends instead of asking the model. */
export function stepTimedOut(active: ActiveRun | null): boolean {
  return (
    active !== null &&
    active.step.kind === 'tools' &&
    active.step.calls.some((call) => call.approval?.status === 'timed_out')
  );
}

/** Changes one call's approval record in the active tools step. */
function withApproval(state: ConversationState, approvalId: string, change: Partial<CallApproval>) {
  const active = state.active!;
  if (active.step.kind !== 'tools') return state;
  const calls = active.step.calls.map((call) =>
    call.approval?.approval_id === approvalId ? { ...call, approval: { ...call.approval, ...change } } : call,
  );
  return { ...state, active: { ...active, step: { ...active.step, calls } } };
}

function resolved(
  runId: string,
  approvalId: string,
  decision: 'approve' | 'deny' | 'timeout',
  reason: string | undefined,
): Command[] {
  return [
    {
      type: 'emit',
      event: {
        event: 'approval.resolved',
        data: {
          run_id: runId,
          approval_id: approvalId,
          decision,
          ...(reason === undefined ? {} : { reason }),
        },
      },
    },
    { type: 'cancelApprovalTimer', approval_id: approvalId },
  ];
}

/** Replaces one call's tool use in the active tools step, and in the assistant content it commits with. */
function editCall(state: ConversationState, toolUseId: string, use: ToolUseBlock): ConversationState {
  const active = state.active;
  if (active === null || active.step.kind !== 'tools') return state;
  const calls = active.step.calls.map((call) => (call.use.id === toolUseId ? { ...call, use } : call));
  const content = active.step.assistant.content.map((block) =>
    block.type === 'tool_use' && block.id === toolUseId ? use : block,
  );
  const step = { ...active.step, calls, assistant: { ...active.step.assistant, content } };
  return { ...state, active: { ...active, step } };
}

/** Applies a human decision. Unknown or decided ids change nothing (the validator refuses them first). */
export function decideApproval(
  state: ConversationState,
  decision: DecideApprovalInput,
  now: number,
): ToolStepTransition {
  const call = pendingCalls(state).find(
    (candidate) => candidate.approval?.approval_id === decision.approval_id,
  );
  const active = state.active;
  if (call === undefined || active === null) return { state, commands: [], step: 'tools' };
  const { approval_id } = decision;
  const reason = decision.reason?.trim() === '' ? undefined : decision.reason;
  if (decision.decision === 'approve') {
    // An edit: the call, and the assistant message it commits with, carry the human's arguments.
    const use = decision.input === undefined ? call.use : { ...call.use, input: decision.input };
    const approved = markAwaiting(
      withApproval(editCall(state, call.use.id, use), approval_id, { status: 'approved' }),
      active.run_id,
      now,
    );
    return {
      state: approved,
      step: 'tools',
      commands: [
        ...resolved(active.run_id, approval_id, 'approve', reason),
        {
          type: 'emit',
          event: {
            event: 'tool.started',
            data: {
              run_id: active.run_id,
              tool_use_id: call.use.id,
              name: call.use.name,
              input: use.input,
            },
          },
        },
        { type: 'runTool', run_id: active.run_id, use, flags: call.flags! },
      ],
    };
  }
  const denied = withApproval(state, approval_id, {
    status: 'denied',
    ...(reason === undefined ? {} : { reason }),
  });
  const content =
    `The user denied this ${call.use.name} call; it did not run.` +
    (reason === undefined ? '' : ` Their reason: ${reason}`);
  const recorded = recordToolResult(denied, denied.active!, call.use.id, { content, is_error: true }, now);
  return {
    ...recorded,
    state: markAwaiting(recorded.state, active.run_id, now),
    commands: [...resolved(active.run_id, approval_id, 'deny', reason), ...recorded.commands],
  };
}

/**
 * A timer fired. The call (and any other call of the step whose time is also up) gets an error
 * result saying it was not approved in time; the caller ends the run once the step is complete.
 */
export function expireApproval(
  state: ConversationState,
  approvalId: string,
  now: number,
): ToolStepTransition {
  const active = state.active;
  const target = pendingCalls(state).find((call) => call.approval?.approval_id === approvalId);
  if (active === null || target === undefined) return { state, commands: [], step: 'tools' };
  const expired = pendingCalls(state).filter(
    (call) => call === target || Date.parse(call.approval!.expires_at) <= now,
  );
  let transition: ToolStepTransition = { state, commands: [], step: 'tools' };
  for (const call of expired) {
    const id = call.approval!.approval_id;
    const marked = withApproval(transition.state, id, { status: 'timed_out' });
    const seconds = state.thread.config.approval_timeout_s;
    const content = `The ${call.use.name} call was not approved in time (no decision within ${seconds} s); it did not run.`;
    const recorded = recordToolResult(marked, marked.active!, call.use.id, { content, is_error: true }, now);
    transition = {
      ...recorded,
      commands: [
        ...transition.commands,
        ...resolved(active.run_id, id, 'timeout', undefined),
        ...recorded.commands,
      ],
    };
  }
  return { ...transition, state: markAwaiting(transition.state, active.run_id, now) };
}

/** Timers for calls still pending, and no `runTool` for them: what a fresh workflow run re-creates. */
export function approvalResumeCommands(state: ConversationState): Command[] {
  return pendingCalls(state).map((call) => ({
    type: 'startApprovalTimer',
    approval_id: call.approval!.approval_id,
    expires_at_ms: Date.parse(call.approval!.expires_at),
  }));
}
