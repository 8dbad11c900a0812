import type { Run } from './run';
import type { Usage } from './usage';
import type { AssistantMessage, UserMessage } from './transcript';

/** The stream topic every durable conversation event is published on. */
export const eventsTopic = 'events';

interface RunEventData {
  run: Run;
}

/**
 * Durable events, as they travel through the conversation's workflow stream and out over SSE.
 * The stream offset of each is its SSE `id`.
 */
export type KeelEvent =
  | { event: 'run.created'; data: RunEventData }
  | { event: 'run.started'; data: RunEventData }
  | { event: 'run.deferred'; data: RunEventData }
  | { event: 'run.completed'; data: RunEventData }
  | { event: 'run.failed'; data: RunEventData }
  | { event: 'run.cancelled'; data: RunEventData }
  | {
      /**
       * A model call was scheduled (decision 0340): its text streams live from the worker that
       * runs it, outside the history. Logged in the workflow task that schedules the call.
       */
      event: 'message.started';
      data: { run_id: string; step: number };
    }
  | {
      event: 'message.delta';
      /**
       * `attempt` changes when a model call is retried: clients drop text from earlier attempts.
       * `whole`: the call's entire streamed text, logged with its answer when the text streamed
       * live; a stream passes on only what its client has not had (api/streams/live-merge.ts).
       */
      data: { run_id: string; step: number; attempt: number; text: string; whole?: true };
    }
  | { event: 'message.completed'; data: { run_id: string; message: AssistantMessage | UserMessage } }
  | {
      event: 'tool.started';
      data: { run_id: string; tool_use_id: string; name: string; input: Record<string, unknown> };
    }
  | {
      event: 'tool.completed';
      data: { run_id: string; tool_use_id: string; name: string; is_error: boolean; content: string };
    }
  | { event: 'usage.updated'; data: { run_id: string; usage: Usage; thread_usage: Usage } }
  | {
      event: 'approval.requested';
      data: {
        run_id: string;
        approval_id: string;
        tool: string;
        input: Record<string, unknown>;
        expires_at: string;
      };
    }
  | {
      event: 'approval.resolved';
      data: {
        run_id: string;
        approval_id: string;
        decision: 'approve' | 'deny' | 'timeout';
        reason?: string;
      };
    }
  | { event: 'budget.warning'; data: { run_id: string; usage: Usage; limit: BudgetLimitView } }
  | { event: 'budget.exceeded'; data: { run_id: string; usage: Usage; limit: BudgetLimitView } }
  | { event: 'child.spawned'; data: { run_id: string; child_thread_id: string; task: string } }
  | { event: 'child.completed'; data: { run_id: string; child_thread_id: string; status: string } };

export type KeelEventName = KeelEvent['event'];

export interface BudgetLimitView {
  max_tokens?: number;
  max_cost_usd?: number;
}

/** Events that end a run: a run's stream ends after one of these. */
export const runTerminalEvents: readonly KeelEventName[] = ['run.completed', 'run.failed', 'run.cancelled'];

/** The run id an event belongs to. */
export function runIdOf(event: KeelEvent): string {
  return 'run' in event.data ? event.data.run.run_id : event.data.run_id;
}
