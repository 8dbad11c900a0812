import type { SessionSummary } from './thread';
import type { Usage } from './usage';
import type { FailureType } from './failures';

export const RunStatus = {
  queued: 'queued',
  running: 'running',
  deferred: 'deferred',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
} as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

export type TerminalRunStatus =
  typeof RunStatus.completed | typeof RunStatus.failed | typeof RunStatus.cancelled;

export function isTerminal(status: RunStatus): status is TerminalRunStatus {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** Why a run is where it is; refines `status`. */
export const StatusReason = {
  awaitingApproval: 'awaiting_approval',
  approvalTimeout: 'approval_timeout',
  budgetExceeded: 'budget_exceeded',
  interrupted: 'interrupted',
  maxTokens: 'max_tokens',
  maxSteps: 'max_steps',
  refusal: 'refusal',
  modelError: 'model_error',
  cancelledByUser: 'cancelled_by_user',
  superseded: 'superseded',
  threadClosed: 'thread_closed',
} as const;
export type StatusReason = (typeof StatusReason)[keyof typeof StatusReason];

/** How a new run treats a thread that is already busy. */
export const MultitaskStrategy = { enqueue: 'enqueue', reject: 'reject', interrupt: 'interrupt' } as const;
export type MultitaskStrategy = (typeof MultitaskStrategy)[keyof typeof MultitaskStrategy];

export interface RunError {
  type: FailureType;
  message: string;
}

/** A run (one user input and everything the agent did to answer it), as the API shows it. */
export interface Run {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  status: RunStatus;
  status_reason?: StatusReason;
  multitask_strategy: MultitaskStrategy;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  started_at?: string;
  ended_at?: string;
  /** Model calls made so far. */
  steps: number;
  usage: Usage;
  /** The final answer's text, when the run produced one (truncated for very long answers). */
  output?: string;
  error?: RunError;
  webhook?: string;
  continuation_of?: string;
  /** Offset of this run's `run.created` event in the thread's stream: where its SSE stream starts. */
  first_event_offset?: number;
  /** The model this run uses, e.g. `scripted:demo`. */
  model: string;
  /** On a finished run: the thread's session summary as this run left it. */
  summary?: SessionSummary;
}
