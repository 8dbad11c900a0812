/**
 * Heartbeats on a timer, from the activity's first line: a model that thinks for a minute
 * before its first token, or a quiet shell command, is alive, and its worker is too.
 */
import { Context } from '@temporalio/activity';
import type { BeatRequests } from './beat-requests';
import { localActivityStop, stoppedByWorkerShutdown, workerShutdownFailure } from './shutdown';

/** Well inside every heartbeat timeout Keel sets (10 s); the SDK throttles what it sends. */
const heartbeatIntervalMs = 1_000;

/**
 * The slow cadence's share of the heartbeat timeout: the SDK's own default throttle, which leaves
 * a beat two seconds of a 10-second timeout to reach the server.
 */
const slowShareOfTimeout = 0.8;

/**
 * Beats at a slow cadence, and at once when asked through `requests` (decision 0420): for a call
 * whose Stop comes by another route than the next beat.
 */
export interface BeatOnRequest {
  requests: BeatRequests;
  workflowId: string;
}

/**
 * Runs `work` with a heartbeat every second, or with `onRequest` every 80 % of the heartbeat
 * timeout and whenever asked. `details` ride on every beat, so the next attempt reads them even
 * when this one dies without a word (a model call's fault count).
 */
export async function withHeartbeats<T>(
  work: (signal: AbortSignal) => Promise<T>,
  details?: unknown,
  onRequest?: BeatOnRequest,
): Promise<T> {
  const context = Context.current();
  // A local activity has no heartbeats: its worker's workflow task is what shows it alive.
  if (context.info.isLocal) return runStoppable(work, localActivityStop());
  const timeoutMs = context.info.heartbeatTimeoutMs;
  const slow = onRequest !== undefined && timeoutMs !== undefined && timeoutMs > 0;
  const beat = () => context.heartbeat(details);
  // The first beat goes out after an interval, not at once: an activity that is done sooner (most
  // tool calls, a fast model) costs the server no heartbeat write at all.
  const timer = setInterval(beat, slow ? timeoutMs * slowShareOfTimeout : heartbeatIntervalMs);
  // Asked, it beats now and again: the SDK sends the first at once and holds the second for its
  // throttle (a second), which catches a cancel the server records just after the request.
  const beatTwice = () => {
    beat();
    beat();
  };
  const forget = slow ? onRequest.requests.add(onRequest.workflowId, beatTwice) : undefined;
  try {
    return await runStoppable(work, context.cancellationSignal);
  } finally {
    clearInterval(timer);
    forget?.();
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
