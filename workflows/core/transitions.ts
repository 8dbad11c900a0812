/**
 * What goes into the reducer (events) and what comes out (commands). Events carry the time they
 * happened, taken from the workflow clock by the interpreter.
 */
import type { PushConfig } from '../../common/a2a-push';
import type {
  CallModelInput,
  CallModelResult,
  ModelCallBudget,
  RunToolInput,
  SendWebhookInput,
} from '../../common/activities';
import type { ChildCompleted } from '../../common/children';
import type { DecideApprovalInput, UpdateLimitsInput } from '../../common/approvals';
import type { KeelEvent } from '../../common/events';
import type { RunError } from '../../common/run';
import type { SubmitInput } from '../../common/messages';
import type { ToolFlags, ToolOutcome } from '../../common/tools';
import type { ToolUseBlock } from '../../common/transcript';
import type { Usage } from '../../common/usage';
import type { ThreadState, ThreadInfo } from './state';
import type { ToolTimeout, WorkerFate } from './wording';

/** How a tool's activity failed, as Temporal reported it. */
export interface ToolFailure {
  /** The innermost message: the activity's own words. */
  message: string;
  /** Set when Temporal gave the call up on by this timeout rather than the tool failing by itself. */
  timeout: ToolTimeout | undefined;
  /**
   * After a heartbeat timeout: whether the worker that ran the call still ran when asked
   * (decision 0412). Absent when that could not be told.
   */
  worker?: WorkerFate;
}

export type ConversationEvent =
  /**
   * `next_offset`: the stream offset the run's first event (`run.created`) will have.
   * `keep_partial`: an input that interrupts the active run lets its model call keep what it said,
   * as a Stop does (`cancelRequested`).
   */
  | {
      type: 'inputSubmitted';
      now: number;
      input: SubmitInput;
      next_offset?: number;
      keep_partial?: true;
    }
  /**
   * Input that arrived durably (a signal, when the door could not wait for the thread) and broke a
   * rule only the thread can check: it becomes a failed run instead of vanishing.
   */
  | { type: 'inputRefused'; now: number; input: SubmitInput; refusal: RunError; next_offset?: number }
  | { type: 'modelResponded'; now: number; run_id: string; step: number; result: CallModelResult }
  /**
   * A model call failed after Temporal's retries: its failure's type (when it had one) and
   * message, as they came; the reducer decides what the run's error says.
   */
  | {
      type: 'modelFailed';
      now: number;
      run_id: string;
      step: number;
      error: { type?: string | undefined; message: string };
      /**
       * What its attempts were billed, when its failure said, so a call that failed is still charged
       * (decision 0425).
       */
      billed?: Usage;
    }
  | { type: 'toolFinished'; now: number; run_id: string; tool_use_id: string; outcome: ToolOutcome }
  /**
   * A tool's activity failed after Temporal's retries. `timeout`: Temporal gave it up on by that
   * timeout (its worker stopped, or could not reach Temporal), so a side-effecting tool may have
   * partly run.
   */
  | {
      type: 'toolFailed';
      now: number;
      run_id: string;
      tool_use_id: string;
      failure: ToolFailure;
    }
  /**
   * The model call of `step` ended as cancelled (the run's Stop), with the text it had streamed
   * (empty when it stopped before any, or could not say).
   */
  | {
      type: 'modelStopped';
      now: number;
      run_id: string;
      step: number;
      text: string;
      /** The attempt whose text streamed live (decision 0340), absent on the history channel. */
      streamed?: { attempt: number };
      /** What its attempts were billed, or may have been, so retried attempts count too (decision 0425). */
      billed?: Usage;
    }
  /**
   * `keep_partial`: a model call in flight keeps what it said: the run ends once the call has
   * stopped, its text committed as a stopped answer. Without it the run ends at once.
   */
  | { type: 'cancelRequested'; now: number; run_id: string; reason?: string; keep_partial?: true }
  | { type: 'runDeferred'; now: number; run_id: string }
  /** `keep_partial`: the active run's model call keeps what it said, as a Stop does. */
  | { type: 'closeRequested'; now: number; reason?: string; keep_partial?: true }
  | { type: 'approvalDecided'; now: number; decision: DecideApprovalInput }
  | { type: 'approvalExpired'; now: number; approval_id: string }
  | { type: 'limitsUpdated'; now: number; limits: UpdateLimitsInput }
  /** Keys merged into the thread's metadata (`PATCH /threads/:id`). */
  | { type: 'metadataPatched'; now: number; metadata: Record<string, unknown> }
  /** A finished run's record removed (`DELETE /threads/:id/runs/:run_id`); its messages stay. */
  | { type: 'runDeleted'; now: number; run_id: string }
  | { type: 'pushConfigSet'; now: number; run_id: string; config: PushConfig }
  | { type: 'pushConfigDeleted'; now: number; run_id: string; config_id: string }
  /** A child agent's usage, rolled up into the thread and the run that spawned it. */
  | { type: 'childUsageReported'; now: number; run_id: string; usage: Usage }
  /** A child started by `startChild` has its task. */
  | { type: 'childStarted'; now: number; child_thread_id: string }
  /** A child's foreground wait (`wait_ms`) ran out before its report. */
  | { type: 'childWaitExpired'; now: number; child_thread_id: string }
  /** A child's report: its one run, finished. */
  | {
      type: 'childCompleted';
      now: number;
      report: ChildCompleted;
      /**
       * A report that came after the run that spawned the child ended counts what the child spent
       * (`keel-late-child-report-counted`); before that patch it was dropped, spend and all.
       */
      late_counted?: true;
    }
  /** On a child's side: its report reached the parent (or could not): the child closes. */
  | { type: 'parentReported'; now: number };

/** An event as the interpreter dispatches it: the time is added when it is reduced. */
export type EventInput = ConversationEvent extends infer E
  ? E extends ConversationEvent
    ? Omit<E, 'now'>
    : never
  : never;

export type Command =
  /**
   * Call the model for the active run's current step. `input` leaves the messages out when they
   * are long: the activity then asks the workflow for them (`getStepMessages`).
   */
  | { type: 'callModel'; run_id: string; step: number; input: CallModelInput }
  | { type: 'runTool'; run_id: string; use: ToolUseBlock; flags: ToolFlags; input: RunToolInput }
  /** Stop whatever activities the run still has in flight. */
  | { type: 'cancelActivities'; run_id: string }
  /** Append a durable event to the conversation's stream. */
  | { type: 'emit'; event: KeelEvent }
  /** A durable timer that sends `approvalExpired` at `expires_at_ms` unless cancelled first. */
  | { type: 'startApprovalTimer'; approval_id: string; expires_at_ms: number }
  | { type: 'cancelApprovalTimer'; approval_id: string }
  /** POST a run's event to its webhook (core/webhooks.ts), even when the run was cancelled. */
  | {
      type: 'sendWebhook';
      delivery: SendWebhookInput;
      /**
       * Sent only by a run that took this patch: `inputRequiredPush`, an A2A push of a task that
       * came to wait on an approval (`keel-a2a-push-input-required`, decision 0505).
       */
      gate?: 'inputRequiredPush';
    }
  /**
   * A run admitted against its owner's quota ended: settle it with the ledger, which frees its slot
   * and counts what it was billed in place of its share (decision 0440).
   */
  | { type: 'settleQuota'; run_id: string; billed_usd: number; ledger?: string }
  /** On a child's side: tell the parent thread that a run ended (the `childCompleted` signal). */
  | { type: 'reportToParent'; report: ChildCompleted }
  /**
   * Start a child thread for a `spawn_agent` call and give it its task, `first_run`; then report
   * `childStarted`, and `childWaitExpired` if no report came within `wait_ms` (0: no wait).
   */
  | {
      type: 'startChild';
      run_id: string;
      tool_use_id: string;
      task: string;
      first_run: SubmitInput;
      child: ThreadInfo;
      background: boolean;
      wait_s: number;
      wait_ms: number;
      /**
       * The share of the thread's budget the child gets as its limits, so parent and children together
       * cannot spend past the thread's budget (decision 0425).
       */
      allowance?: ModelCallBudget;
    };

export interface Transition {
  state: ThreadState;
  commands: Command[];
}
