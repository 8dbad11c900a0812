/**
 * `runTool`: runs one tool call in the thread's workspace. What the model should see (bad input,
 * a refused path, a failing command) returns as an `is_error` result; anything else fails the
 * activity so Temporal's retry policy for the tool decides.
 */
import { Context } from '@temporalio/activity';
import type { RunToolInput, ToolCallProgress } from '../common/activities';
import { limits, truncateWithNote } from '../common/limits';
import { scopeOf, workspaceNameOf } from '../common/thread';
import type { ToolOutcome } from '../common/tools';
import type { Store } from '../store/store';
import { failure, WorkspaceViolation } from './errors';
import { withHeartbeats } from './heartbeat';
import { interruptedByShutdown, stoppedByWorkerShutdown } from './shutdown';
import type { ToolRegistry } from './tools/registry';
import type { Sandbox } from './tools/sandbox';
import { withoutHostPaths } from './tools/host-paths';
import { workspaceFor } from './tools/workspace';

export interface RunToolDependencies {
  registry: ToolRegistry;
  /** `KEEL_WORKSPACES_DIR`: one directory per thread below it. */
  workspacesDir: string;
  environment: Record<string, string>;
  sandbox: Sandbox;
  /**
   * This worker's Temporal identity, on every heartbeat, so a call Temporal gives up on names its
   * worker and the workflow can ask whether it still runs (decision 0412); none when unknown.
   */
  identity?: string | undefined;
  /** The Store the memory tools read and write (opened at their first call). */
  store?: Store | undefined;
}

/**
 * Every tool's result, extensions' too, cut where it is made: no activity result may be larger
 * than a later decode accepts (a payload over the codec's bound bricked its thread, decision 0321).
 */
export function capped(outcome: ToolOutcome): ToolOutcome {
  return { is_error: outcome.is_error, content: truncateWithNote(outcome.content, limits.toolOutputChars) };
}

/** `<thread_id>:<tool_use_id>`, its thread id scoped as the workspace is, so owners never share one. */
function scopedKey(input: RunToolInput, scope: string | undefined): string {
  const unscoped = `${input.thread_id}:`;
  if (scope === undefined || !input.idempotency_key.startsWith(unscoped)) return input.idempotency_key;
  return `${workspaceNameOf(input.thread_id, scope)}:${input.idempotency_key.slice(unscoped.length)}`;
}

export function createRunTool({
  registry,
  workspacesDir,
  environment,
  sandbox,
  identity,
  store,
}: RunToolDependencies) {
  const progress: ToolCallProgress | undefined = identity === undefined ? undefined : { worker: identity };
  return async function runTool(input: RunToolInput): Promise<ToolOutcome> {
    const tool = registry.get(input.name);
    if (tool === undefined)
      return { is_error: true, content: `Tool "${input.name}" is not available on this worker.` };
    // Scoped as the thread's workflow id is: two owners' threads of one id are two workspaces.
    const scope = scopeOf(Context.current().info.workflowExecution?.workflowId ?? '');
    const workspace = await workspaceFor(workspacesDir, input.thread_id, scope);
    return withHeartbeats(async (signal) => {
      try {
        const outcome = await tool.run(input.input, {
          threadId: input.thread_id,
          workspace,
          signal,
          idempotencyKey: scopedKey(input, scope),
          environment,
          // Its uid is this workspace's (decision 0325), for the file tools to hand files to.
          sandbox,
          networkHosts: sandbox.grant(input.network_hosts),
          ...(input.memory === undefined || store === undefined
            ? {}
            : { memory: { owner: input.memory.owner, store } }),
        });
        return capped(outcome);
      } catch (error) {
        if (error instanceof WorkspaceViolation) return { is_error: true, content: error.message };
        if (signal.aborted) {
          if (tool.descriptor.sideEffects && stoppedByWorkerShutdown())
            return interruptedByShutdown(input.name);
          throw error;
        }
        const message = error instanceof Error ? error.message : String(error);
        Context.current().log.warn('tool failed', { tool: input.name, error: message });
        // The model reads this message: no host path in it (the cause, for operators, keeps them).
        throw failure('ToolFailed', `${input.name}: ${withoutHostPaths(message, workspace)}`, {
          cause: error,
        });
      }
    }, progress);
  };
}
