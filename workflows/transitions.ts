/**
 * What goes into the reducer (events) and what comes out (commands). Events carry the time they
 * happened, taken from the workflow clock by the interpreter.
 */
import type { CallModelResult } from '../common/activities';
import type { DecideApprovalInput, UpdateLimitsInput } from '../common/approvals';
import type { KeelEvent } from '../common/events';
import type { RunError } from '../common/run';
import type { SubmitInput } from '../common/messages';
import type { ToolFlags, ToolOutcome } from '../common/tools';
import type { ToolUseBlock } from '../common/transcript';
import type { Usage } from '../common/usage';
import type { ConversationState } from './state';

export type ConversationEvent =
  /** `next_offset`: the stream offset the run's first event (`run.created`) will have. */
  | { type: 'inputSubmitted'; now: number; input: SubmitInput; next_offset?: number }
  /**
   * Input that arrived durably (a signal, when the door could not wait for the thread) and broke a
   * rule only the thread can check: it becomes a failed run instead of vanishing.
   */
  | { type: 'inputRefused'; now: number; input: SubmitInput; refusal: RunError; next_offset?: number }
  | { type: 'modelResponded'; now: number; run_id: string; step: number; result: CallModelResult }
  | { type: 'modelFailed'; now: number; run_id: string; step: number; error: RunError }
  | { type: 'toolFinished'; now: number; run_id: string; tool_use_id: string; outcome: ToolOutcome }
  | { type: 'cancelRequested'; now: number; run_id: string; reason?: string }
  | { type: 'runDeferred'; now: number; run_id: string }
  | { type: 'closeRequested'; now: number; reason?: string }
  | { type: 'approvalDecided'; now: number; decision: DecideApprovalInput }
  | { type: 'approvalExpired'; now: number; approval_id: string }
  | { type: 'limitsUpdated'; now: number; limits: UpdateLimitsInput }
  /** Keys merged into the thread's metadata (`PATCH /threads/:id`). */
  | { type: 'metadataPatched'; now: number; metadata: Record<string, unknown> }
  /** A finished run's record removed (`DELETE /threads/:id/runs/:run_id`); its messages stay. */
  | { type: 'runDeleted'; now: number; run_id: string }
  /** A child agent's usage, rolled up into the thread and the run that spawned it. */
  | { type: 'childUsageReported'; now: number; run_id: string; usage: Usage };

/** An event as the interpreter dispatches it: the time is added when it is reduced. */
export type EventInput = ConversationEvent extends infer E
  ? E extends ConversationEvent
    ? Omit<E, 'now'>
    : never
  : never;

export type Command =
  /** Call the model for the active run's current step; the request is built from the state. */
  | { type: 'callModel'; run_id: string; step: number }
  | { type: 'runTool'; run_id: string; use: ToolUseBlock; flags: ToolFlags }
  /** Stop whatever activities the run still has in flight. */
  | { type: 'cancelActivities'; run_id: string }
  /** Append a durable event to the conversation's stream. */
  | { type: 'emit'; event: KeelEvent }
  /** A durable timer that sends `approvalExpired` at `expires_at_ms` unless cancelled first. */
  | { type: 'startApprovalTimer'; approval_id: string; expires_at_ms: number }
  | { type: 'cancelApprovalTimer'; approval_id: string };

export interface Transition {
  state: ConversationState;
  commands: Command[];
}
