/**
 * Whether a tool call may run, must wait for a human, or is refused: the part of human
 * approvals the tool step needs when the model asks for tools.
 */
import type { StatusReason } from '../../common/run';
import type { ThreadConfig } from '../../common/thread';
import type { ToolFlags } from '../../common/tools';
import type { ToolUseBlock } from '../../common/transcript';
import { emit, iso } from './emit';
import type { ActiveRun, AwaitingApprovalCall, ThreadState, ToolCall } from './state';
import type { Command } from './transitions';

/** What happens to one tool call: it runs, it waits for a human, or it is refused by a rule. */
export type Gate = 'run' | 'ask' | 'deny';

/** Per-tool rules win over the mode; under `require` sensitive tools ask. */
export function gateFor(config: ThreadConfig, tool: string, flags: ToolFlags): Gate {
  const rule = config.tool_rules?.[tool];
  if (rule === 'allow') return 'run';
  if (rule === 'deny') return 'deny';
  if (rule === 'ask') return 'ask';
  return config.approval === 'require' && flags.sensitive ? 'ask' : 'run';
}

/**
 * A new pending approval for call `index` of the active run's current step. The id is
 * derived from the run, step and position, so it is deterministic and unique in the thread.
 */
export function requestApproval(
  state: ThreadState,
  active: ActiveRun,
  use: ToolUseBlock,
  index: number,
  now: number,
): { approval: AwaitingApprovalCall['approval']; commands: Command[] } {
  const expiresAtMs = now + state.thread.config.approval_timeout_s * 1000;
  const approval = {
    approval_id: `${active.run_id}.${active.steps}.${index + 1}`,
    status: 'pending' as const,
    requested_at: iso(now),
    expires_at: iso(expiresAtMs),
  };
  return {
    approval,
    commands: [
      emit.approvalRequested(active.run_id, approval.approval_id, use, approval.expires_at),
      { type: 'startApprovalTimer', approval_id: approval.approval_id, expires_at_ms: expiresAtMs },
    ],
  };
}

const isAwaiting = (call: ToolCall): call is AwaitingApprovalCall => call.status === 'awaiting_approval';

export function pendingCalls(state: ThreadState): AwaitingApprovalCall[] {
  const step = state.active?.step;
  return step?.kind === 'tools' ? step.calls.filter(isAwaiting) : [];
}

/**
 * Sets (or clears) `awaiting_approval` on the active run, to match its pending calls; the state
 * itself when it already does.
 */
export function markAwaiting(state: ThreadState, runId: string, now: number): ThreadState {
  const awaiting = pendingCalls(state).length > 0;
  let changed = false;
  const runs = state.runs.map((run) => {
    if (run.run_id !== runId) return run;
    const isAwaiting = run.status_reason === 'awaiting_approval';
    if (awaiting === isAwaiting) return run;
    changed = true;
    const { status_reason: _dropped, ...rest } = run;
    const reason: { status_reason?: StatusReason } = awaiting ? { status_reason: 'awaiting_approval' } : {};
    return { ...rest, ...reason, updated_at: iso(now) };
  });
  return changed ? { ...state, runs } : state;
}
