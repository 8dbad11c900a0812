/**
 * Heartbeats on a timer, from the activity's first line: a model that thinks for a minute
 * before its first token, or a quiet shell command, is alive, and its worker is too.
 */
import { Context } from '@temporalio/activity';
import { localActivityStop, stoppedByWorkerShutdown, workerShutdownFailure } from './shutdown';

/** Well inside every heartbeat timeout Keel sets (10 s); the SDK throttles what it sends. */
const heartbeatIntervalMs = 1_000;

/**
 * Runs `work` with a heartbeat every second. `details` ride on every beat, so the next attempt
 * reads them even when this one dies without a word (a model call's fault count).
 */
export async function withHeartbeats<T>(
  work: (signal: AbortSignal) => Promise<T>,
  details?: unknown,
): Promise<T> {
  const context = Context.current();
  // A local activity has no heartbeats: its worker's workflow task is what shows it alive.
  if (context.info.isLocal) return runStoppable(work, localActivityStop());
  // The first beat goes out after a second, not at once: an activity that is done sooner (most
  // tool calls, a fast model) costs the server no heartbeat write at all.
  const timer = setInterval(() => context.heartbeat(details), heartbeatIntervalMs);
  try {
    return await runStoppable(work, context.cancellationSignal);
  } finally {
    clearInterval(timer);
  }
}

async function runStoppable<T>(work: (signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T> {
  try {
    return await work(signal);
  } catch (error) {
    // Past the shutdown grace: fail retryably now rather than leave the next worker waiting.
    if (stoppedByWorkerShutdown()) throw workerShutdownFailure(error);
    throw error;
  }
}
