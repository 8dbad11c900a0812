/**
 * The conversation's state: everything the workflow knows, carried whole across continue-as-new.
 * No Temporal import here; the reducer owns every change to it.
 */
import type { Run } from '../common/run';
import type { ThreadConfig, ThreadStatus } from '../common/thread';
import type { ToolFlags } from '../common/tools';
import type {
  AssistantMessage,
  Message,
  ToolResultBlock,
  ToolUseBlock,
  UserContent,
} from '../common/transcript';
import { type Usage, zeroUsage } from '../common/usage';

/** One tool call of the model's answer, with its result once it has one. */
export interface ToolCall {
  use: ToolUseBlock;
  /** Null when the worker does not know the tool: it is answered with an error at once. */
  flags: ToolFlags | null;
  result?: ToolResultBlock;
  /** Present when the call needed a human decision (see approvals.ts). */
  approval?: CallApproval;
}

/** A call's human checkpoint: `pending` calls are not run until approved. */
export interface CallApproval {
  approval_id: string;
  status: 'pending' | 'approved' | 'denied' | 'timed_out';
  requested_at: string;
  expires_at: string;
  reason?: string;
}

/**
 * Where the active run is. `model`: a model call for step `steps` is in flight (or, right after
 * continue-as-new, about to be re-issued). `tools`: the model asked for tools; the assistant
 * message waits here, out of the transcript, until every call has a result.
 */
export type Step = { kind: 'model' } | { kind: 'tools'; assistant: PendingAssistant; calls: ToolCall[] };

/** An assistant answer that asked for tools, before it may enter the transcript. */
export type PendingAssistant = Pick<AssistantMessage, 'content' | 'model' | 'stop_reason'>;

export interface ActiveRun {
  run_id: string;
  /** Model calls made in this run; the current step's number. */
  steps: number;
  step: Step;
  started_at_ms: number;
  /** The model this run uses. */
  model: string;
}

export interface QueuedRun {
  run_id: string;
  content: UserContent[];
  /** Set by a run through an assistant: the thread's configuration from this run on. */
  config?: ThreadConfig;
}

export interface ThreadInfo {
  thread_id: string;
  owner?: string;
  metadata: Record<string, unknown>;
  config: ThreadConfig;
  created_at: string;
}

export interface ConversationState {
  thread: ThreadInfo;
  transcript: Message[];
  /** Messages compacted out of the transcript's front so far. */
  compacted_messages: number;
  /** Known runs, oldest first (bounded by `limits.runsKept`). */
  runs: Run[];
  queue: QueuedRun[];
  active: ActiveRun | null;
  usage: Usage;
  /** Totals for the session summary. */
  totals: { runs: number; steps: number; duration_ms: number };
  /** Source of message ids. */
  next_sequence: number;
  updated_at: string;
  closed: boolean;
  /** Set once `budget.warning` was emitted; cleared when the limits change (see budget.ts). */
  budget_warned?: boolean;
}

export function initialState(thread: ThreadInfo): ConversationState {
  return {
    thread,
    transcript: [],
    compacted_messages: 0,
    runs: [],
    queue: [],
    active: null,
    usage: zeroUsage,
    totals: { runs: 0, steps: 0, duration_ms: 0 },
    next_sequence: 1,
    updated_at: thread.created_at,
    closed: false,
  };
}

export function findRun(state: ConversationState, runId: string): Run | undefined {
  return state.runs.find((run) => run.run_id === runId);
}

/** The thread's status, derived (never stored) so it cannot disagree with the runs. */
export function threadStatus(state: ConversationState): ThreadStatus {
  if (state.closed) return 'closed';
  if (state.active !== null) {
    const run = findRun(state, state.active.run_id);
    return run?.status_reason === 'awaiting_approval' ? 'interrupted' : 'busy';
  }
  if (state.queue.length > 0) return 'busy';
  for (let index = state.runs.length - 1; index >= 0; index--) {
    const status = state.runs[index]!.status;
    if (status === 'completed' || status === 'cancelled') return 'idle';
    if (status === 'failed') return 'error';
  }
  return 'idle';
}
