/**
 * The events the reducer appends to the thread's stream, one named builder each, so that a
 * transition reads as what it decides: `emit.toolStarted(run, use)`, not an object literal.
 */
import type { BudgetLimitView, KeelEvent } from '../../common/events';
import type { Run } from '../../common/run';
import type { Message, ToolUseBlock } from '../../common/transcript';
import type { Usage } from '../../common/usage';
import type { Command } from './transitions';

type RunEvent = Extract<KeelEvent, { data: { run: Run } }>['event'];
type Emit = Extract<Command, { type: 'emit' }>;

const emitting = (event: KeelEvent): Emit => ({ type: 'emit', event });

/** The time of an event, as every record of the state writes it. */
export const iso = (now: number): string => new Date(now).toISOString();

export const emit = {
  run: (event: RunEvent, run: Run): Emit => emitting({ event, data: { run } }),

  messageStarted: (runId: string, step: number): Emit =>
    emitting({ event: 'message.started', data: { run_id: runId, step } }),

  messageDelta: (runId: string, step: number, attempt: number, text: string, whole = false): Emit =>
    emitting({
      event: 'message.delta',
      data: { run_id: runId, step, attempt, text, ...(whole ? { whole: true as const } : {}) },
    }),

  messageCompleted: (runId: string, message: Message): Emit =>
    emitting({ event: 'message.completed', data: { run_id: runId, message } }),

  toolStarted: (runId: string, use: ToolUseBlock): Emit =>
    emitting({
      event: 'tool.started',
      data: { run_id: runId, tool_use_id: use.id, name: use.name, input: use.input },
    }),

  toolCompleted: (runId: string, use: ToolUseBlock, isError: boolean, content: string): Emit =>
    emitting({
      event: 'tool.completed',
      data: { run_id: runId, tool_use_id: use.id, name: use.name, is_error: isError, content },
    }),

  usageUpdated: (runId: string, usage: Usage, threadUsage: Usage): Emit =>
    emitting({ event: 'usage.updated', data: { run_id: runId, usage, thread_usage: threadUsage } }),

  approvalRequested: (runId: string, approvalId: string, use: ToolUseBlock, expiresAt: string): Emit =>
    emitting({
      event: 'approval.requested',
      data: {
        run_id: runId,
        approval_id: approvalId,
        tool: use.name,
        input: use.input,
        expires_at: expiresAt,
      },
    }),

  approvalResolved: (
    runId: string,
    approvalId: string,
    decision: 'approve' | 'deny' | 'timeout',
    reason: string | undefined,
  ): Emit =>
    emitting({
      event: 'approval.resolved',
      data: { run_id: runId, approval_id: approvalId, decision, ...(reason === undefined ? {} : { reason }) },
    }),

  budget: (
    event: 'budget.warning' | 'budget.exceeded',
    runId: string,
    usage: Usage,
    limit: BudgetLimitView,
  ): Emit => emitting({ event, data: { run_id: runId, usage, limit } }),

  childSpawned: (runId: string, childThreadId: string, task: string): Emit =>
    emitting({ event: 'child.spawned', data: { run_id: runId, child_thread_id: childThreadId, task } }),

  childCompleted: (runId: string, childThreadId: string, status: string): Emit =>
    emitting({ event: 'child.completed', data: { run_id: runId, child_thread_id: childThreadId, status } }),
};
