/**
 * The process budget an ordinary-user worker shares with its sandboxes (decision 0465). Each
 * command's user namespace has its own count, held to `KEEL_SANDBOX_PROCESSES`; above it the
 * kernel also counts every sandbox's processes against the worker's uid, within the limit the
 * worker itself had (RLIMIT_NPROC) when bubblewrap made the namespace. When that limit is lower
 * than the calls running at once could take, enough floods at once reach it, and then other
 * threads' commands (and the worker's own spawns) fail until they time out.
 */

/** The activity slots a worker has: Temporal's default, which Keel keeps (worker/create-worker.ts). */
export const activitySlots = 100;

/** The soft process limit in the text of `/proc/self/limits`, or undefined when it is not there. */
export function processLimitOf(limits: string): number | 'unlimited' | undefined {
  const soft = /^Max processes\s+(\S+)/m.exec(limits)?.[1];
  if (soft === undefined) return undefined;
  if (soft === 'unlimited') return soft;
  const value = Number(soft);
  return Number.isSafeInteger(value) ? value : undefined;
}

/**
 * What the operator should read at start, or undefined when the worker's own limit leaves every
 * concurrent call its whole budget. A root worker is never held to it (each thread has a uid).
 */
export function processBudgetWarning(options: {
  root: boolean;
  limit: number | 'unlimited' | undefined;
  perCall: number;
  concurrentCalls: number;
}): string | undefined {
  const { root, limit, perCall, concurrentCalls } = options;
  if (root || limit === undefined || limit === 'unlimited') return undefined;
  const needed = perCall * concurrentCalls;
  if (limit >= needed) return undefined;
  const floods = Math.max(1, Math.floor(limit / perCall));
  return (
    `This worker's own process limit (ulimit -u ${limit}) is shared by every sandbox it runs: ` +
    `${floods} thread(s) holding KEEL_SANDBOX_PROCESSES=${perCall} at once fill it, and then other threads' ` +
    `commands fail until those time out. Raise it to ${needed} or more (KEEL_SANDBOX_PROCESSES × ${concurrentCalls} ` +
    'calls at once), or leave it unlimited (Docker does by default).'
  );
}
