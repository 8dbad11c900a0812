/**
 * A Keel run as an A2A v1.0 task in A2A's JSON form (decision 0445): pure, so that both the API
 * (api/a2a/task-views.ts, which turns it into the SDK's objects) and the workflow (a push
 * notification's body, decision 0485) shape the same task. The task id is the run's
 * (`<thread_id>:<run_id>`) and the context is the thread.
 */
import type { PendingApproval } from './approvals';
import type { Run } from './run';
import { approvalLine, taskIdOf, taskStatusOf } from './run-task';

/** A2A's task states, as its JSON names them. */
export const TaskStates = {
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  inputRequired: 'TASK_STATE_INPUT_REQUIRED',
  completed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  canceled: 'TASK_STATE_CANCELED',
} as const;
export type TaskStateName = (typeof TaskStates)[keyof typeof TaskStates];

/** The artifact a completed task carries: the agent's final message. */
export const answerArtifactId = 'answer';

/** The state a run is in; a queued run that no worker took yet is `submitted`. */
export function taskStateOf(run: Run): TaskStateName {
  const status = taskStatusOf(run);
  if (status === 'completed') return TaskStates.completed;
  if (status === 'failed') return TaskStates.failed;
  if (status === 'cancelled') return TaskStates.canceled;
  if (status === 'input_required') return TaskStates.inputRequired;
  return run.status === 'queued' && run.steps === 0 ? TaskStates.submitted : TaskStates.working;
}

export const textPart = (text: string) => ({ text, mediaType: 'text/plain' });

/** An agent message on the task, as A2A's JSON has it. */
export function agentMessage(run: Run, id: string, parts: unknown[]) {
  return {
    messageId: `${run.run_id}-${id}`,
    contextId: run.thread_id,
    taskId: taskIdOf(run),
    role: 'ROLE_AGENT',
    parts,
  };
}

/**
 * What the status says: the answer when completed, why it ended otherwise, and for a pending
 * approval what it asks with the approvals as a data part, which a follow-up message answers.
 */
function statusMessageOf(run: Run, pending: readonly PendingApproval[]) {
  const state = taskStateOf(run);
  if (state === TaskStates.completed) return agentMessage(run, 'answer', [textPart(run.output ?? '')]);
  if (state === TaskStates.failed)
    return agentMessage(run, 'failed', [
      textPart(run.error?.message ?? `run failed (${run.status_reason ?? 'error'})`),
    ]);
  if (state === TaskStates.canceled)
    return agentMessage(run, 'cancelled', [
      textPart(`run cancelled${run.status_reason ? ` (${run.status_reason})` : ''}`),
    ]);
  if (state === TaskStates.inputRequired && pending.length > 0)
    return agentMessage(run, `approval-${pending.map(({ approval_id }) => approval_id).join('-')}`, [
      textPart(
        `Waits for approval of ${pending.map(approvalLine).join('; ')}. Answer with a message on this task: "approve", "deny: <reason>", or a data part {"decision": "approve" | "edit" | "deny", "input": {…}, "reason": "…"}.`,
      ),
      {
        data: {
          approvals: pending.map(({ approval_id, tool, input, expires_at }) => ({
            approval_id,
            tool,
            input,
            expires_at,
          })),
        },
        mediaType: 'application/json',
      },
    ]);
  return undefined;
}

/** The task's JSON: its status, the answer as an artifact once completed, Keel's ids as metadata. */
export function taskJsonOf(run: Run, pending: readonly PendingApproval[] = []) {
  const own = pending.filter((approval) => approval.run_id === run.run_id);
  const message = statusMessageOf(run, own);
  const state = taskStateOf(run);
  return {
    id: taskIdOf(run),
    contextId: run.thread_id,
    status: { state, timestamp: run.updated_at, ...(message === undefined ? {} : { message }) },
    artifacts:
      state === TaskStates.completed
        ? [{ artifactId: answerArtifactId, name: 'answer', parts: [textPart(run.output ?? '')] }]
        : [],
    metadata: {
      'keel/thread_id': run.thread_id,
      'keel/run_id': run.run_id,
      'keel/assistant_id': run.assistant_id,
      'keel/status': run.status,
    },
  };
}
