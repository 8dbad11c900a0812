/**
 * When a run stops, in one place: before each model call (budget, step limit), when a tool step
 * ends with a call nobody approved in time, and by how the model ended its answer.
 */
import type { CallModelResult } from '../../common/activities';
import type { RunError, StatusReason } from '../../common/run';
import { budgetExceeded } from './budget';
import { quotaExceeded } from './quota';
import type { ActiveRun, ThreadState, ToolCall } from './state';
import { say } from './wording';

/** A run that must end `failed`: why, for the run record and for the notice people read. */
export interface Stop {
  reason: StatusReason;
  error: RunError;
}

/** Why the active run may not make its next model call, or undefined when it may. */
export function stopBeforeModelCall(state: ThreadState, active: ActiveRun): Stop | undefined {
  const overBudget = budgetExceeded(state);
  if (overBudget !== undefined) return { reason: 'budget_exceeded', error: overBudget };
  const overQuota = quotaExceeded(state);
  if (overQuota !== undefined) return { reason: 'quota_exceeded', error: overQuota };
  const maxSteps = state.thread.config.max_steps;
  if (active.steps >= maxSteps)
    return { reason: 'max_steps', error: { type: 'MaxStepsReached', message: say.maxSteps(maxSteps) } };
  return undefined;
}

/** A call of the step ran out of approval time: the run ends instead of asking the model again. */
export function stopAfterToolStep(calls: readonly ToolCall[]): Stop | undefined {
  if (!calls.some((call) => call.approval?.status === 'timed_out')) return undefined;
  return { reason: 'approval_timeout', error: { type: 'ApprovalTimeout', message: say.approvalTimedOut } };
}

/**
 * Whether the answer's tool calls run: only when the model stopped to use them (or ended its turn
 * or paused with them). A cut-off tool call may be malformed, and a refusal must not act.
 */
export function runsTools(result: CallModelResult, asksForTools: boolean): boolean {
  return (
    asksForTools &&
    (result.stop_reason === 'tool_use' ||
      result.stop_reason === 'end_turn' ||
      result.stop_reason === 'pause_turn')
  );
}

/** `pause_turn`: the model wants to go on in a new call. */
export const continuesTurn = (result: CallModelResult): boolean => result.stop_reason === 'pause_turn';

/** What a completed run's status reason says about how the model ended it, if anything. */
export function completionReason(result: CallModelResult): StatusReason | undefined {
  if (result.stop_reason === 'refusal') return 'refusal';
  if (result.stop_reason === 'max_tokens') return 'max_tokens';
  return undefined;
}
