/**
 * Temporal calls that a caller can abort, without a listener left behind per call.
 *
 * The Temporal client adds an `abort` listener to the scope's signal for every gRPC call and never
 * removes it (`Connection.withAbortSignal`). Many calls under one long-lived signal — a stream's
 * polls under its request's signal, the re-asks of a long wait — piled listeners up until Node
 * printed `MaxListenersExceededWarning` in the API's terminal. Here each scope gets a signal of
 * its own that follows the caller's only while the scope runs, and is dropped with its listeners.
 */
import { setMaxListeners } from 'node:events';
import type { Client } from '@temporalio/client';

export async function withCallSignal<T>(
  client: Client,
  signal: AbortSignal,
  fn: () => Promise<T>,
): Promise<T> {
  const scope = new AbortController();
  // One listener per call made in `fn`: they go when the scope does, so any number is fine.
  setMaxListeners(0, scope.signal);
  const abort = (): void => scope.abort(signal.reason);
  if (signal.aborted) abort();
  else signal.addEventListener('abort', abort, { once: true });
  try {
    return await client.withAbortSignal(scope.signal, fn);
  } finally {
    signal.removeEventListener('abort', abort);
  }
}
