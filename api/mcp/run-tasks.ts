/**
 * A Keel run seen as an MCP task (decisions 0430, 0475): pure translations, nothing here talks to
 * Temporal. Two shapes: 2025-11-25's task (`ttl`, `pollInterval`, the result read by
 * `tasks/result`) and the 2026-07-28 Tasks extension's (`ttlMs`, `pollIntervalMs`, the result or
 * error inline in `tasks/get`). The task id names the run and its thread, so any API process reads it from the
 * thread's workflow with no table of its own: an API restarted between two `tasks/get` reads
 * the same task.
 */
import type { PendingApproval } from '../../common/approvals';
import { isTerminal, type Run } from '../../common/run';
import { idPattern, limits } from '../../common/limits';

/** What a client is told to wait between `tasks/get` calls. */
export const pollIntervalMs = 1_000;

/** The extension's key for the keys of a result's `_meta` that name Keel's thread and run. */
export const threadMetaKey = 'keel/thread_id';
export const runMetaKey = 'keel/run_id';

export {
  approvalLine,
  taskIdOf,
  taskStatusOf,
  type RunTaskRef,
  type TaskStatus,
} from '../../common/run-task';
import { approvalLine, taskIdOf, taskStatusOf, type RunTaskRef } from '../../common/run-task';

/** The run a task id names, or undefined for a string that cannot name one. */
export function runOfTaskId(taskId: string): RunTaskRef | undefined {
  const [threadId, runId, ...rest] = taskId.split(':');
  const valid = (id: string | undefined): id is string =>
    id !== undefined && id.length <= limits.maxIdChars && idPattern.test(id);
  if (rest.length > 0 || !valid(threadId) || !valid(runId)) return undefined;
  return { thread_id: threadId, run_id: runId };
}

function statusMessageOf(run: Run, pending: readonly PendingApproval[]): string {
  if (taskStatusOf(run) === 'input_required' && pending.length > 0)
    return `waits for approval of ${pending.map(approvalLine).join('; ')}`;
  if (run.status === 'failed') return run.error?.message ?? `run failed (${run.status_reason ?? 'error'})`;
  if (run.status === 'cancelled') return `run cancelled${run.status_reason ? ` (${run.status_reason})` : ''}`;
  if (run.status === 'completed') return 'run completed';
  return `run ${run.status}, ${run.steps} model call${run.steps === 1 ? '' : 's'} so far`;
}

/**
 * What an approval asks, as the Tasks extension's `inputRequests` carry it (an
 * `elicitation/create` form): approve, edit (the tool's arguments as JSON) or deny with a reason.
 * Keyed by the approval's id, which `tasks/update`'s `inputResponses` answer.
 */
export function inputRequestsOf(pending: readonly PendingApproval[]): Record<string, unknown> {
  return Object.fromEntries(
    pending.map((approval) => [
      approval.approval_id,
      {
        method: 'elicitation/create',
        params: {
          mode: 'form',
          message: `Approve ${approvalLine(approval)}?`,
          requestedSchema: {
            type: 'object',
            properties: {
              decision: { type: 'string', enum: ['approve', 'edit', 'deny'], default: 'approve' },
              input: {
                type: 'string',
                description: "With edit: the tool's arguments as a JSON object",
                default: JSON.stringify(approval.input),
              },
              reason: { type: 'string', description: 'With deny: why, shown to the model' },
            },
            required: ['decision'],
          },
        },
      },
    ]),
  );
}

/**
 * The task as `tasks/get` answers it (2025-11-25's Task), with the Tasks extension's
 * `inputRequests` while it waits on approvals. Keel keeps a run as long as its thread: `ttl` null.
 */
export function taskOf(run: Run, pending: readonly PendingApproval[] = []) {
  const status = taskStatusOf(run);
  const own = pending.filter((approval) => approval.run_id === run.run_id);
  return {
    taskId: taskIdOf(run),
    status,
    statusMessage: statusMessageOf(run, own),
    createdAt: run.created_at,
    lastUpdatedAt: run.updated_at,
    ttl: null,
    ...(isTerminal(run.status) ? {} : { pollInterval: pollIntervalMs }),
    ...(status === 'input_required' && own.length > 0 ? { inputRequests: inputRequestsOf(own) } : {}),
  };
}

/** The JSON-RPC error a failed task carries (2026-07-28): Keel's run failed while it ran. */
export const runFailedCode = -32603;

/**
 * The task as the 2026-07-28 Tasks extension shows it (`DetailedTask`): `tasks/get` and, with
 * `resultType: "task"`, the `tools/call` that made it. A completed task carries the call's result,
 * a failed one the error that ended it, one waiting on approvals their `inputRequests`.
 */
export function extensionTaskOf(run: Run, pending: readonly PendingApproval[] = []) {
  const { ttl: _ttl, pollInterval: _poll, ...task } = taskOf(run, pending);
  const base = {
    ...task,
    ttlMs: null,
    ...(isTerminal(run.status) ? {} : { pollIntervalMs: pollIntervalMs }),
  };
  if (run.status === 'completed') return { ...base, result: toolResultOf(run) };
  if (run.status === 'failed')
    return {
      ...base,
      error: {
        code: runFailedCode,
        message: run.error?.message ?? `run failed (${run.status_reason ?? 'error'})`,
        data: { status_reason: run.status_reason ?? null },
      },
    };
  return base;
}

/** The `tools/call` result a finished run answers: its final message text, or what ended it. */
export function toolResultOf(run: Run) {
  const meta = { [threadMetaKey]: run.thread_id, [runMetaKey]: run.run_id };
  if (run.status === 'completed')
    return { content: [{ type: 'text' as const, text: run.output ?? '' }], _meta: meta };
  const why =
    run.status === 'cancelled'
      ? `the run was cancelled${run.status_reason ? ` (${run.status_reason})` : ''}`
      : `the run failed: ${run.error?.message ?? run.status_reason ?? 'error'}`;
  return { content: [{ type: 'text' as const, text: why }], isError: true, _meta: meta };
}

/** Tasks per page of `tasks/list` (2025-11-25). */
export const tasksPageSize = 50;

/**
 * One page of `tasks/list`: the caller's runs made over MCP, newest first, from `cursor` (an
 * offset Keel gave in `nextCursor`; opaque to the client). Undefined for a cursor Keel never gives.
 */
export function taskPageOf(runs: readonly Run[], cursor: string | undefined, size = tasksPageSize) {
  const offset = cursor === undefined ? 0 : Number(cursor);
  if (cursor === '' || !Number.isSafeInteger(offset) || offset < 0) return undefined;
  const ordered = runs
    .filter((run) => run.metadata.source === 'mcp')
    .sort((a, b) => b.created_at.localeCompare(a.created_at) || a.run_id.localeCompare(b.run_id));
  const next = offset + size;
  return {
    tasks: ordered.slice(offset, next).map((run) => taskOf(run)),
    ...(next < ordered.length ? { nextCursor: String(next) } : {}),
  };
}
