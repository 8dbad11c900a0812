/**
 * A run's durable events as an async iterator, for A2A's streams: `followEvents` (the API's
 * re-attachable run stream, api/event-stream.ts) pushes, the stream's generator pulls. Ending the
 * iteration (the caller gone, the stream done) stops the follower.
 */
import type { Client } from '@temporalio/client';
import type { KeelEvent } from '../../common/events';
import { followEvents } from '../event-stream';
import type { ThreadRef } from '../thread-ref';

export interface RunEventsOptions {
  client: Client;
  thread: ThreadRef;
  runId: string;
  /** The first offset to deliver; `base`: the oldest the log holds. */
  fromOffset: number | 'base';
  signal: AbortSignal;
}

/** The run's events from `fromOffset` on, live after the log's end, until its terminal event. */
export async function* runEvents({
  client,
  thread,
  runId,
  fromOffset,
  signal,
}: RunEventsOptions): AsyncGenerator<KeelEvent, void, undefined> {
  const stop = new AbortController();
  const onGone = (): void => stop.abort();
  signal.addEventListener('abort', onGone, { once: true });
  const queue: KeelEvent[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  let failure: unknown;
  const following = followEvents({
    client,
    thread,
    runId,
    fromOffset,
    signal: stop.signal,
    onEvent: (_offset, event) => {
      queue.push(event);
      wake?.();
    },
  }).then(
    () => {
      ended = true;
      wake?.();
    },
    (error: unknown) => {
      failure = error;
      ended = true;
      wake?.();
    },
  );
  try {
    for (;;) {
      const next = queue.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      if (ended) {
        if (failure !== undefined) throw failure;
        return;
      }
      await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
    }
  } finally {
    stop.abort();
    signal.removeEventListener('abort', onGone);
    await following;
  }
}
