/**
 * Sends what the outbox holds, oldest first, one at a time. A message the API cannot take yet (no
 * answer, or 503 while no worker holds the thread) waits, and is tried again every few seconds
 * while the API answers `/ok`; one it refuses keeps the reason, for Retry.
 */
import { useEffect, useRef, useState } from 'react';
import { ApiCallError } from '../../common/api-call-errors';
import { readableError, statusOf, type Connection } from './keel-api';
import { deliver, outbox, useOutbox } from './outbox';

const retryMs = 2_000;

/** Modes the page streams a run in (the join asks for the same). */
export const streamModes = ['values', 'messages-tuple', 'custom'] as const;

/**
 * No answer, or one that says "later": the same request may well succeed in a moment. A spent
 * quota says "later" too, but its later is when the day or the month resets (decision 0440):
 * asking every few seconds until then would only count refusals, so it waits for Retry.
 */
const worthWaiting = (error: unknown): boolean => {
  const status = statusOf(error);
  if (error instanceof ApiCallError && error.code === 'quota_exceeded') return false;
  return status === undefined || status === 401 || status === 408 || status === 429 || status >= 500;
};

/** Why a message is not sent, in words: an owner's quota refusal says which it was. */
function problemOf(error: unknown): string {
  if (statusOf(error) === undefined) return 'The API cannot be reached.';
  const said = readableError(error).replace(/\.?$/, '.');
  if (error instanceof ApiCallError && error.code === 'quota_exceeded')
    return `Your quota is used up: ${said}`;
  if (error instanceof ApiCallError && error.code === 'concurrency_limit')
    return `Too many of your runs are under way: ${said}`;
  return said;
}

export function useDelivery(connection: Connection, reachable: boolean, onUnauthorized: () => void): void {
  const items = useOutbox();
  const busy = useRef(false);
  const [pause, setPause] = useState(0);
  useEffect(() => {
    if (busy.current) return;
    const next = outbox.all().find((item) => item.state === 'sending' || item.state === 'waiting');
    // What waits goes once the API answers again; Retry marks it sending, which goes at once.
    if (next === undefined || (next.state === 'waiting' && !reachable)) return;
    busy.current = true;
    outbox.update(next.key, { state: 'sending' });
    deliver(connection, next, streamModes).then(
      (run) => {
        busy.current = false;
        outbox.update(next.key, { state: 'taken', runId: run.run_id, create: undefined, problem: undefined });
      },
      (error: unknown) => {
        if (statusOf(error) === 401) onUnauthorized();
        outbox.update(next.key, {
          state: worthWaiting(error) ? 'waiting' : 'failed',
          problem: problemOf(error),
        });
        // A pause before the next try, so an API that is away is not asked in a tight loop.
        window.setTimeout(() => {
          busy.current = false;
          setPause((count) => count + 1);
        }, retryMs);
      },
    );
  }, [items, reachable, pause, connection, onUnauthorized]);
}
