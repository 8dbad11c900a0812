/**
 * A Keel run seen as a task, as MCP and A2A both name it (decisions 0430, 0445): pure, so the
 * workflow may shape a task too (an A2A push notification, decision 0485).
 */
import type { PendingApproval } from './approvals';
import type { Run } from './run';

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export interface RunTaskRef {
  thread_id: string;
  run_id: string;
}

/** `<thread_id>:<run_id>`: ids never hold a colon, so the split is unambiguous. */
export const taskIdOf = ({ thread_id, run_id }: RunTaskRef): string => `${thread_id}:${run_id}`;

/** The task status a run is in; a run waiting on a human's approval is `input_required`. */
export function taskStatusOf(run: Run): TaskStatus {
  if (run.status === 'completed') return 'completed';
  if (run.status === 'failed') return 'failed';
  if (run.status === 'cancelled') return 'cancelled';
  return run.status_reason === 'awaiting_approval' ? 'input_required' : 'working';
}

/** One line saying what an approval asks, e.g. `bash: {"command":"ls"}`. */
export function approvalLine(approval: PendingApproval): string {
  const input = JSON.stringify(approval.input);
  return `${approval.tool}: ${input.length > 300 ? `${input.slice(0, 300)}…` : input}`;
}
