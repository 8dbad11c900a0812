/**
 * A Keel run seen as an A2A v1.0 task (decision 0445): pure translations in A2A's JSON form,
 * turned into the SDK's objects with its own `fromJSON`. The task id is the run's, as MCP's is
 * (`<thread_id>:<run_id>`, api/mcp/run-tasks.ts), and the context is the thread.
 */
import { StreamResponse, Task } from '@a2a-js/sdk';
import type { PendingApproval } from '../../common/approvals';
import type { KeelEvent } from '../../common/events';
import type { Run } from '../../common/run';
import { agentMessage, answerArtifactId, taskJsonOf, TaskStates, textPart } from '../../common/a2a-task';
import { taskIdOf } from '../mcp/run-tasks';

export {
  answerArtifactId,
  taskJsonOf,
  taskStateOf,
  TaskStates,
  type TaskStateName,
} from '../../common/a2a-task';

/** The task as the SDK's transport serializes it. */
export const taskOf = (run: Run, pending: readonly PendingApproval[] = []): Task =>
  Task.fromJSON(taskJsonOf(run, pending));

/** A status update of the task, as a stream carries it. */
export function statusUpdateOf(run: Run, pending: readonly PendingApproval[] = []): StreamResponse {
  const { id, contextId, status, metadata } = taskJsonOf(run, pending);
  return StreamResponse.fromJSON({ statusUpdate: { taskId: id, contextId, status, metadata } });
}

/** The answer as an artifact update, sent just before a completed task's last status. */
export function answerUpdateOf(run: Run): StreamResponse {
  const { id, contextId, artifacts } = taskJsonOf(run);
  return StreamResponse.fromJSON({
    artifactUpdate: { taskId: id, contextId, artifact: artifacts[0], lastChunk: true },
  });
}

/**
 * A piece of the model's text as it is written, on the answer artifact: `append` false starts the
 * artifact afresh (a new model call, or a retried attempt of one), true adds to it. The completed
 * task's `answerUpdateOf` then replaces it with the answer, whole.
 */
export function textUpdateOf(run: Run, text: string, append: boolean): StreamResponse {
  return StreamResponse.fromJSON({
    artifactUpdate: {
      taskId: taskIdOf(run),
      contextId: run.thread_id,
      artifact: { artifactId: answerArtifactId, name: 'answer', parts: [textPart(text)] },
      append,
      lastChunk: false,
    },
  });
}

/** A working status saying what the agent does now (a tool it calls), while a stream follows it. */
export function progressUpdateOf(run: Run, text: string): StreamResponse {
  return StreamResponse.fromJSON({
    statusUpdate: {
      taskId: taskIdOf(run),
      contextId: run.thread_id,
      status: {
        state: TaskStates.working,
        timestamp: new Date().toISOString(),
        message: agentMessage(run, `progress-${Date.now()}`, [textPart(text)]),
      },
    },
  });
}

/** What a durable event of the run says to a stream: a state change, a tool call, or nothing. */
export type RunEventView =
  | { kind: 'status'; run: Run }
  | { kind: 'approval'; approvalId: string }
  | { kind: 'progress'; text: string }
  | { kind: 'text'; call: string; text: string }
  | { kind: 'none' };

export function viewOfEvent(event: KeelEvent): RunEventView {
  switch (event.event) {
    case 'run.started':
    case 'run.completed':
    case 'run.failed':
    case 'run.cancelled':
      return { kind: 'status', run: event.data.run };
    case 'approval.requested':
      return { kind: 'approval', approvalId: event.data.approval_id };
    case 'tool.started':
      return { kind: 'progress', text: `calling ${event.data.name}` };
    case 'message.delta':
      // One model call's attempt: its pieces add up; another's start the text afresh.
      return {
        kind: 'text',
        call: `${event.data.run_id}/${event.data.step}/${event.data.attempt}`,
        text: event.data.text,
      };
    default:
      return { kind: 'none' };
  }
}
