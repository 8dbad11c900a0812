import type { ThreadSummary } from './thread';
import { zeroUsage, type Usage } from './usage';
import type { FailureType } from './failures';
import type { ThreadConfig } from './thread';
import type { UserContent } from './transcript';
import type { QuotaRefusal, RunQuota } from './quota';

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
  /** The owner's quota (its share for this run) is spent (decision 0440). */
  quotaExceeded: 'quota_exceeded',
  interrupted: 'interrupted',
  maxTokens: 'max_tokens',
  maxSteps: 'max_steps',
  refusal: 'refusal',
  modelError: 'model_error',
  cancelledByUser: 'cancelled_by_user',
  superseded: 'superseded',
  threadClosed: 'thread_closed',
  /** Taken durably while the thread could not decide at once, then refused by its rules. */
  threadBusy: 'thread_busy',
  invalidInput: 'invalid_input',
} as const;
export type StatusReason = (typeof StatusReason)[keyof typeof StatusReason];

/** How a new run treats a thread that is already busy. */
export const MultitaskStrategy = { enqueue: 'enqueue', reject: 'reject', interrupt: 'interrupt' } as const;
export type MultitaskStrategy = (typeof MultitaskStrategy)[keyof typeof MultitaskStrategy];

export interface RunError {
  type: FailureType;
  message: string;
}

/**
 * A run (one user input and everything the agent did to answer it), as the API shows it, in the
 * state it is in: not started yet, started, or ended. Only a started run has `started_at` without
 * `ended_at`; only an ended one has `ended_at`, its output, error, summary or refused input.
 * `deferred` (the caller stopped waiting) may come before or after the start.
 */
export type Run = NotStartedRun | StartedRun | EndedRun;

/** What a run is in every state. */
export interface RunBase {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  status: RunStatus;
  status_reason?: StatusReason;
  multitask_strategy: MultitaskStrategy;
  metadata: Record<string, unknown>;
  created_at: string;
  updated_at: string;
  /** Model calls made so far. */
  steps: number;
  usage: Usage;
  webhook?: string;
  continuation_of?: string;
  /** A fork: the checkpoint the run goes on from (see `SubmitInput.checkpoint_id`). */
  checkpoint_id?: string;
  /** The stream modes it was created with, which a join naming none streams (`SubmitInput.stream_mode`). */
  stream_mode?: readonly string[];
  /** Offset of this run's `run.created` event in the thread's stream: where its SSE stream starts. */
  first_event_offset?: number;
  /**
   * Admitted against its owner's quota, with at most this share to spend, so the owner's runs at once
   * cannot together spend more than was left (decision 0440).
   */
  quota?: RunQuota;
  /** The model this run uses, e.g. `scripted:demo`. */
  model: string;
}

/** Fields only an ended run has, absent on the others so any run can be asked for them. */
interface NotEnded {
  ended_at?: undefined;
  output?: undefined;
  error?: undefined;
  summary?: undefined;
  refused_input?: undefined;
}

/** Waiting for the thread to be free. */
export interface NotStartedRun extends RunBase, NotEnded {
  status: typeof RunStatus.queued | typeof RunStatus.deferred;
  started_at?: undefined;
}

/** The thread's active run. */
export interface StartedRun extends RunBase, NotEnded {
  status: typeof RunStatus.running | typeof RunStatus.deferred;
  started_at: string;
}

/** Completed, failed or cancelled; a run refused or cancelled before it started has no `started_at`. */
export interface EndedRun extends RunBase {
  status: TerminalRunStatus;
  // `| undefined` on what the other states hold as absent, so a run of any state ends by a spread.
  started_at?: string | undefined;
  ended_at: string;
  /** The final answer's text, when the run produced one (truncated for very long answers). */
  output?: string | undefined;
  error?: RunError | undefined;
  /** The thread's summary as this run left it. */
  summary?: ThreadSummary | undefined;
  /**
   * On a run refused after it was taken (the thread was busy under `reject`, closed, or the input
   * broke a rule only the thread can check): the text that was not added, so it can be resent.
   */
  refused_input?: string | undefined;
}

/**
 * The run an input opens, `queued` until the thread starts it: what the thread records, and what
 * the API answers when it handed the input over by signal and the thread has not seen it yet.
 */
export function queuedRun(
  thread: { thread_id: string; model: string },
  input: SubmitInput,
  now: number,
  firstEventOffset?: number,
): NotStartedRun {
  const at = new Date(now).toISOString();
  return {
    run_id: input.run_id,
    thread_id: thread.thread_id,
    assistant_id: input.assistant_id,
    status: 'queued',
    multitask_strategy: input.multitask_strategy,
    metadata: input.metadata,
    created_at: at,
    updated_at: at,
    steps: 0,
    usage: zeroUsage,
    model: input.model ?? thread.model,
    ...(input.webhook === undefined ? {} : { webhook: input.webhook }),
    ...(input.continuation_of === undefined ? {} : { continuation_of: input.continuation_of }),
    ...(input.checkpoint_id === undefined ? {} : { checkpoint_id: input.checkpoint_id }),
    ...(input.stream_mode === undefined ? {} : { stream_mode: input.stream_mode }),
    ...(firstEventOffset === undefined ? {} : { first_event_offset: firstEventOffset }),
    ...(input.quota === undefined ? {} : { quota: input.quota }),
  };
}

export interface SubmitInput {
  run_id: string;
  assistant_id: string;
  content: UserContent[];
  multitask_strategy: MultitaskStrategy;
  metadata: Record<string, unknown>;
  /** Overrides the thread's model for this run. */
  model?: string;
  /** The run's assistant's settings: the thread's configuration from this run on. */
  config?: ThreadConfig;
  webhook?: string;
  continuation_of?: string;
  /**
   * The stream modes the run was created with (`runs/stream`), kept on the run so that a join
   * naming none streams the run's own, as LangGraph does: LangGraph mode names, or `["keel"]`.
   */
  stream_mode?: readonly string[];
  /**
   * Fork: the run goes on from this earlier checkpoint (a message id ending a committed step, or
   * `start`) instead of the newest; what came after is kept as an earlier branch.
   */
  checkpoint_id?: string;
  /**
   * `false`: the caller wants the run's answer, not its text token by token (`runs/wait`), so its
   * model calls stream no deltas (and so may run as local activities: see the interpreter).
   */
  deltas?: false;
  /**
   * Admitted against its owner's quota, with this share to spend, so the owner's runs at once cannot
   * together spend more than was left (decision 0440).
   */
  quota?: RunQuota;
  /**
   * Refused at a workflow door by its owner's quota (a cron's fire, decision 0480): the thread
   * records the run as failed (`quota_exceeded`), so the refusal is seen, and runs nothing.
   */
  quota_refused?: QuotaRefusal;
}
