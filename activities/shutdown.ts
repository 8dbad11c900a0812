/**
 * What an activity does when its worker shuts down past the grace period (the SDK cancels it with
 * `workerShutdown` set). A model call fails retryably at once, so the next worker takes it over
 * without waiting for a heartbeat timeout; a side-effecting tool answers in-band that it was
 * interrupted, completing the activity so the workflow does not wait either.
 */
import { Context } from '@temporalio/activity';
import { failure } from './errors';

/**
 * Aborted when this process's worker is past its shutdown grace. The SDK cancels ordinary
 * activities then, but lets local activities run to their end (a model call made inside its
 * workflow task, decision 0200): they follow this instead, so the call is cut as an ordinary one
 * would be, and the next worker makes it again.
 */
const pastGrace = new AbortController();

/** Called by the worker process when its shutdown grace has run out. */
export function shutdownGraceOver(): void {
  pastGrace.abort();
}

/** What a local activity stops on: its own cancellation, or its worker past the grace. */
export function localActivityStop(): AbortSignal {
  return AbortSignal.any([Context.current().cancellationSignal, pastGrace.signal]);
}

/** True once this activity was cancelled because its worker is shutting down. */
export function stoppedByWorkerShutdown(): boolean {
  const context = Context.current();
  if (context.info.isLocal) return pastGrace.signal.aborted;
  return context.cancellationSignal.aborted && context.cancellationDetails?.workerShutdown === true;
}

/** Delay before the next worker's attempt: as soon as any worker polls. */
const retryAtOnceMs = 100;

export function workerShutdownFailure(cause: unknown) {
  return failure('WorkerShutdown', 'the worker shut down before this finished; another worker retries it', {
    nextRetryDelayMs: retryAtOnceMs,
    cause,
  });
}

export function interruptedByShutdown(toolName: string) {
  return {
    is_error: true,
    content: `Tool "${toolName}" was interrupted by worker shutdown — it may have partly run; it was not run again.`,
  };
}
