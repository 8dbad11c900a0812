/**
 * Waiting for a run without polling: one `awaitRun` update that the workflow completes in the
 * same task as the run's end (and answers early at continue-as-new, when we ask the next run).
 * Giving up only stops the waiting; the run goes on.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Client,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { awaitRunUpdate, getRunQuery } from '../../common/messages';
import { isTerminal, type Run } from '../../common/run';
import { withCallSignal } from '../gateway/call-signal';
import type { ThreadRef } from '../threads/thread-ref';
import { isOutage } from '../gateway/intake';

/** Between asking an ended run and its successor: continue-as-new takes a moment. */
const handOverPauseMs = 50;
/** Between asks while the thread's worker is gone or Temporal is unreachable. */
const outagePauseMs = 500;

/** The update reached a run that ended (continued as new, or the thread closed) before answering. */
function endedUnderUs(error: unknown): boolean {
  if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
  return (
    error instanceof WorkflowUpdateFailedError &&
    error.cause instanceof ApplicationFailure &&
    error.cause.type === 'AcceptedUpdateCompletedWorkflow'
  );
}

/** A run handed over by signal that the thread has not taken in yet (its worker is coming back). */
const notSeenYet = (error: unknown): boolean =>
  error instanceof WorkflowUpdateFailedError &&
  error.cause instanceof ApplicationFailure &&
  error.cause.type === 'RunNotFound';

/**
 * Resolves with the finished run, or undefined when `timeoutMs` passes first (or the caller
 * goes away, through `signal`).
 */
export async function waitForRun(
  client: Client,
  thread: ThreadRef,
  runId: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Run | undefined> {
  if (signal?.aborted === true) return undefined;
  const deadline = Date.now() + timeoutMs;
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const onCallerGone = (): void => controller.abort();
  signal?.addEventListener('abort', onCallerGone, { once: true });
  const handle = client.workflow.getHandle(thread.workflow_id);
  // An in-flight update call does not always end with the abort: stop waiting on it regardless.
  const abandoned = new Promise<undefined>((resolve) =>
    controller.signal.addEventListener('abort', () => resolve(undefined), { once: true }),
  );
  try {
    while (!controller.signal.aborted) {
      try {
        const asking = withCallSignal(client, controller.signal, () =>
          handle.executeUpdate(awaitRunUpdate, {
            args: [{ run_id: runId, timeout_ms: Math.max(1, deadline - Date.now()) }],
          }),
        );
        asking.catch(() => undefined);
        const run = await Promise.race([asking, abandoned]);
        if (run === undefined) return undefined;
        if (isTerminal(run.status)) return run;
      } catch (error) {
        if (controller.signal.aborted) return undefined;
        if (error instanceof WorkflowNotFoundError) {
          // The thread's workflow has ended (closed): its last state still answers queries.
          const run = await handle.query(getRunQuery, { run_id: runId });
          return run !== null && isTerminal(run.status) ? run : undefined;
        }
        if (isOutage(error) || notSeenYet(error)) {
          // No worker holds the thread right now (a deploy, a crash), or it has not taken the run in
          // yet: wait it out, then ask again.
          await sleep(outagePauseMs, undefined, { signal: controller.signal }).catch(() => undefined);
          continue;
        }
        if (!endedUnderUs(error)) throw error;
      }
      // Answered early (timeout, or the workflow handing over to continue-as-new): ask again.
      if (Date.now() >= deadline) return undefined;
      await sleep(handOverPauseMs, undefined, { signal: controller.signal }).catch(() => undefined);
    }
    return undefined;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onCallerGone);
  }
}
