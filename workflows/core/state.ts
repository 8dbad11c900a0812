/**
 * The conversation's state: everything the workflow knows, carried whole across continue-as-new.
 * No Temporal import here; the reducer owns every change to it.
 */
import type { RunPushConfigs } from '../../common/a2a-push';
import type { ModelCallBudget } from '../../common/activities';
import type { ChildCompleted } from '../../common/children';
import { isTerminal, type Run, type RunError, type StatusReason } from '../../common/run';
import type { ThreadSummary, ThreadConfig, ThreadStatus } from '../../common/thread';
import type { ToolFlags } from '../../common/tools';
import type {
  AssistantMessage,
  Branch,
  Message,
  ToolResultBlock,
  ToolUseBlock,
  UserContent,
} from '../../common/transcript';
import { totalTokens, type Usage, zeroUsage } from '../../common/usage';

/** A call's human approval: a call that waits for it is not run until approved. */
export interface CallApproval {
  approval_id: string;
  status: 'pending' | 'approved' | 'denied' | 'timed_out';
  requested_at: string;
  expires_at: string;
  reason?: string;
}

/**
 * One tool call of the model's answer, in the state it is in: waiting for a human, running, or
 * done with its result. `result?: undefined` on the first two lets a reader ask any call for it.
 */
export type ToolCall = AwaitingApprovalCall | RunningCall | DoneCall;

export interface AwaitingApprovalCall {
  status: 'awaiting_approval';
  use: ToolUseBlock;
  flags: ToolFlags;
  approval: CallApproval & { status: 'pending' };
  result?: undefined;
}

/** Started (its activity or child agent is in flight), after an approval when one was asked. */
export interface RunningCall {
  status: 'running';
  use: ToolUseBlock;
  flags: ToolFlags;
  approval?: CallApproval & { status: 'approved' };
  result?: undefined;
}

export interface DoneCall {
  status: 'done';
  use: ToolUseBlock;
  /** Null when the worker does not know the tool: it is answered with an error at once. */
  flags: ToolFlags | null;
  result: ToolResultBlock;
  approval?: CallApproval;
}

/** Gives a call its result, whatever state it was in (and the outcome of its approval, if it changed). */
export function done(
  call: ToolCall,
  result: ToolResultBlock,
  approval: CallApproval | undefined = call.approval,
): DoneCall {
  const { use, flags } = call;
  return { status: 'done', use, flags, result, ...(approval === undefined ? {} : { approval }) };
}

/**
 * Where the active run is. `model`: a model call for step `steps` is in flight (or, right after
 * continue-as-new, about to be re-issued). `tools`: the model asked for tools; the assistant
 * message waits here, out of the transcript, until every call has a result.
 */
export type Step =
  { kind: 'model'; stopping?: Stopping } | { kind: 'tools'; assistant: PendingAssistant; calls: ToolCall[] };

/**
 * A Stop asked of a model step: the call was told to stop, and the run ends as cancelled, with
 * the text the model had streamed, once the call has stopped (decision 0370).
 */
export interface Stopping {
  reason: StatusReason;
  error: RunError;
}

/** An assistant answer that asked for tools, before it may enter the transcript. */
export type PendingAssistant = Pick<AssistantMessage, 'content' | 'model' | 'stop_reason'>;

/** The run being worked on: at most one per thread. */
export interface ActiveRun {
  run_id: string;
  /** Model calls made in this run; the current step's number. */
  steps: number;
  step: Step;
  started_at_ms: number;
  /** The model this run uses. */
  model: string;
  /** `false`: its model calls stream no deltas (`SubmitInput.deltas`). */
  deltas?: false;
}

export interface QueuedRun {
  run_id: string;
  content: UserContent[];
  /** `false`: its model calls will stream no deltas (`SubmitInput.deltas`). */
  deltas?: false;
  /** Set by a run through an assistant: the thread's configuration from this run on. */
  config?: ThreadConfig;
  /** A fork: the checkpoint the run goes on from when it starts (see branches.ts). */
  checkpoint_id?: string;
}

export interface ThreadInfo {
  thread_id: string;
  owner?: string;
  metadata: Record<string, unknown>;
  config: ThreadConfig;
  created_at: string;
}

/** A child agent a `spawn_agent` call started, until its report is used (see sub-agents.ts). */
export interface ChildRecord {
  child_thread_id: string;
  /** The run and call that spawned it. */
  run_id: string;
  tool_use_id: string;
  task: string;
  /** Answered at once: the report becomes a continuation run. */
  background: boolean;
  /** Seconds the call waits for the report before the child goes on in the background. */
  wait_s: number;
  /**
   * `starting`: started, not yet running its task; `waiting`: its call waits for the report;
   * `background`: its call was answered, and the report will be a continuation run.
   */
  phase: 'starting' | 'waiting' | 'background';
  /** A report that came before the child was known to run its task. */
  report?: ChildCompleted;
  /**
   * The share of this thread's budget the child was given as its own limits: held as reserved
   * until its report rolls its usage up (decision 0425). Absent when this thread has no limits,
   * and for children started by earlier releases.
   */
  allowance?: ModelCallBudget;
}

export interface ThreadState {
  thread: ThreadInfo;
  transcript: Message[];
  /** Messages compacted out of the transcript's front so far. */
  compacted_messages: number;
  /** Known runs, oldest first (bounded by `limits.runsKept`). */
  runs: Run[];
  queue: QueuedRun[];
  active: ActiveRun | null;
  usage: Usage;
  /** Totals for the thread summary. */
  totals: { runs: number; steps: number; duration_ms: number };
  /** Source of message ids. */
  next_sequence: number;
  updated_at: string;
  closed: boolean;
  /** Set once `budget.warning` was emitted; cleared when the limits change (see budget.ts). */
  budget_warned?: boolean;
  /** Child agents whose report has not been used yet (absent in states from earlier releases). */
  children?: ChildRecord[];
  /** Earlier branches that forks cut off the transcript, bounded (absent until the first fork). */
  branches?: Branch[];
  /**
   * Bumped whenever the transcript changes other than by appending (compaction, a fork), so a
   * reader that holds its front can tell it still holds it (absent in states from earlier releases).
   */
  transcript_revision?: number;
  /**
   * `JSON.stringify(transcript).length`, kept as messages are appended so compaction need not
   * serialize the whole transcript at every append (absent: computed once when needed).
   */
  transcript_chars?: number;
  /** A2A push notification configs of unfinished runs (decision 0485; absent until the first). */
  push_configs?: RunPushConfigs[];
}

export function initialState(thread: ThreadInfo): ThreadState {
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

/** Equal for two states whose transcripts differ only by messages appended to the later one. */
export function transcriptRevision(state: ThreadState): string {
  return `${state.thread.thread_id}/${state.thread.created_at}/${state.transcript_revision ?? 0}`;
}

/** The state with its transcript marked as rewritten (see `ThreadState.transcript_revision`). */
export function revised(state: ThreadState): ThreadState {
  return { ...state, transcript_revision: (state.transcript_revision ?? 0) + 1 };
}

/** A tool call as releases before the states union carried it: no `status`, optional fields. */
type CarriedToolCall =
  | ToolCall
  | {
      status?: undefined;
      use: ToolUseBlock;
      flags: ToolFlags | null;
      result?: ToolResultBlock;
      approval?: CallApproval;
    };

function upgradeCall(call: CarriedToolCall): ToolCall {
  if (call.status !== undefined) return call;
  const { use, flags, result, approval } = call;
  const approvalOf = approval === undefined ? {} : { approval };
  if (result !== undefined) return { status: 'done', use, flags, result, ...approvalOf };
  if (flags === null) {
    const unknown: ToolResultBlock = {
      type: 'tool_result',
      tool_use_id: use.id,
      content: 'Unknown tool.',
      is_error: true,
    };
    return { status: 'done', use, flags, result: unknown, ...approvalOf };
  }
  if (approval?.status === 'pending')
    return { status: 'awaiting_approval', use, flags, approval: { ...approval, status: 'pending' } };
  return {
    status: 'running',
    use,
    flags,
    ...(approval === undefined ? {} : { approval: { ...approval, status: 'approved' } }),
  };
}

/**
 * A state carried across continue-as-new, in today's shape: tool calls carried by an earlier
 * release get the `status` their fields imply.
 */
export function fromCarried(state: ThreadState): ThreadState {
  const active = state.active;
  if (active?.step.kind !== 'tools') return state;
  const carried: readonly CarriedToolCall[] = active.step.calls;
  return { ...state, active: { ...active, step: { ...active.step, calls: carried.map(upgradeCall) } } };
}

/** Runs, model calls, tokens, cost and time in runs so far. */
export function threadSummary(state: ThreadState): ThreadSummary {
  return {
    runs: state.totals.runs,
    steps: state.totals.steps,
    tokens: totalTokens(state.usage),
    cost_usd: state.usage.cost_usd,
    duration_ms: state.totals.duration_ms,
  };
}

export function findRun(state: ThreadState, runId: string): Run | undefined {
  return state.runs.find((run) => run.run_id === runId);
}

/** The thread's status, derived (never stored) so it cannot disagree with the runs. */
export function threadStatus(state: ThreadState): ThreadStatus {
  if (state.closed) return 'closed';
  if (state.active !== null) {
    const run = findRun(state, state.active.run_id);
    return run?.status_reason === 'awaiting_approval' ? 'interrupted' : 'busy';
  }
  if (state.queue.length > 0) return 'busy';
  const last = state.runs.findLast((run) => isTerminal(run.status));
  return last?.status === 'failed' ? 'error' : 'idle';
}
