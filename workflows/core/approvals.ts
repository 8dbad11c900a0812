/**
 * Human approvals, pure over the tool step. A call that needs approval waits in the tools step
 * (no `runTool`) with a pending approval and a durable timer; approving runs it, denying or
 * expiring answers it with an `is_error` result, so the transcript invariant holds whatever the
 * human does. What that comes to (the step done, the run no longer awaiting) is the sequencer's.
 */
import type { DecideApprovalInput, PendingApproval } from '../../common/approvals';
import { pendingCalls } from './approval-gate';
import { emit } from './emit';
import type { Rejection } from '../../common/input-rules';
import type { AwaitingApprovalCall, ThreadState, ToolCall } from './state';
import type { ToolOutcome } from '../../common/tools';
import { afterStart, recordToolResult, startCall, type ToolStepChange } from './tool-step';
import type { Command } from './transitions';
import { say } from './wording';

export function pendingApprovals(state: ThreadState): PendingApproval[] {
  const runId = state.active?.run_id ?? '';
  return pendingCalls(state).map(({ use, approval }) => ({
    approval_id: approval.approval_id,
    run_id: runId,
    tool_use_id: use.id,
    tool: use.name,
    input: use.input,
    requested_at: approval.requested_at,
    expires_at: approval.expires_at,
  }));
}

const pendingCall = (state: ThreadState, approvalId: string): AwaitingApprovalCall | undefined =>
  pendingCalls(state).find((call) => call.approval.approval_id === approvalId);

export function validateDecision(state: ThreadState, input: DecideApprovalInput): Rejection | undefined {
  if (input.decision !== 'approve' && input.decision !== 'deny')
    return { type: 'InvalidInput', message: 'decision must be "approve" or "deny"' };
  if (pendingCall(state, input.approval_id) !== undefined) return undefined;
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
function couldHaveBeenRequested(state: ThreadState, approvalId: string): boolean {
  const match = /^(.+)\.(\d+)\.(\d+)$/.exec(approvalId);
  if (match === null) return false;
  const run = state.runs.find((candidate) => candidate.run_id === match[1]);
  return run !== undefined && Number(match[2]) <= run.steps && Number(match[3]) >= 1;
}

function resolved(
  runId: string,
  approvalId: string,
  decision: 'approve' | 'deny' | 'timeout',
  reason: string | undefined,
): Command[] {
  return [
    emit.approvalResolved(runId, approvalId, decision, reason),
    { type: 'cancelApprovalTimer', approval_id: approvalId },
  ];
}

/** Applies a human decision. Unknown or decided ids change nothing (the validator refuses them first). */
export function decideApproval(
  state: ThreadState,
  decision: DecideApprovalInput,
  now: number,
): ToolStepChange {
  const call = pendingCall(state, decision.approval_id);
  const active = state.active;
  if (call === undefined || active === null || active.step.kind !== 'tools')
    return { state, commands: [], done: false };
  const { approval_id } = decision;
  const reason = decision.reason?.trim() === '' ? undefined : decision.reason;
  if (decision.decision === 'approve') {
    // An edit: the call, and the assistant message it commits with, carry the human's arguments.
    const use = decision.input === undefined ? call.use : { ...call.use, input: decision.input };
    const running: ToolCall = {
      ...call,
      use,
      status: 'running',
      approval: { ...call.approval, status: 'approved' },
    };
    const calls = active.step.calls.map((candidate) => (candidate === call ? running : candidate));
    const content = active.step.assistant.content.map((block) =>
      block.type === 'tool_use' && block.id === use.id ? use : block,
    );
    const step = { ...active.step, calls, assistant: { ...active.step.assistant, content } };
    const approved = { ...state, active: { ...active, step } };
    const started = startCall(state, active.run_id, use, call.flags, now);
    const transition: ToolStepChange = {
      state: approved,
      done: false,
      commands: [...resolved(active.run_id, approval_id, 'approve', reason), ...started.commands],
    };
    const refused =
      started.refusal === undefined ? [] : [[call.use.id, started.refusal] as [string, ToolOutcome]];
    return afterStart(transition, active.run_id, refused);
  }
  const denied = { ...call.approval, status: 'denied' as const, ...(reason === undefined ? {} : { reason }) };
  const content = say.deniedByUser(call.use.name, reason);
  const recorded = recordToolResult(state, active.run_id, call.use.id, { content, is_error: true }, denied);
  return {
    ...recorded,
    commands: [...resolved(active.run_id, approval_id, 'deny', reason), ...recorded.commands],
  };
}

/**
 * A timer fired. The call (and any other call of the step whose time is also up) gets an error
 * result saying it was not approved in time; the sequencer ends the run once the step is complete.
 */
export function expireApproval(state: ThreadState, approvalId: string, now: number): ToolStepChange {
  const active = state.active;
  const target = pendingCall(state, approvalId);
  if (active === null || target === undefined) return { state, commands: [], done: false };
  const expired = pendingCalls(state).filter(
    (call) => call === target || Date.parse(call.approval.expires_at) <= now,
  );
  const seconds = state.thread.config.approval_timeout_s;
  let transition: ToolStepChange = { state, commands: [], done: false };
  for (const call of expired) {
    const id = call.approval.approval_id;
    const timedOut = { ...call.approval, status: 'timed_out' as const };
    const content = say.notApprovedInTime(call.use.name, seconds);
    const recorded = recordToolResult(
      transition.state,
      active.run_id,
      call.use.id,
      { content, is_error: true },
      timedOut,
    );
    transition = {
      ...recorded,
      commands: [
        ...transition.commands,
        ...resolved(active.run_id, id, 'timeout', undefined),
        ...recorded.commands,
      ],
    };
  }
  return transition;
}

/** Timers for calls still pending, and no `runTool` for them: what a fresh workflow run re-creates. */
export function approvalResumeCommands(state: ThreadState): Command[] {
  return pendingCalls(state).map(({ approval }) => ({
    type: 'startApprovalTimer',
    approval_id: approval.approval_id,
    expires_at_ms: Date.parse(approval.expires_at),
  }));
}
