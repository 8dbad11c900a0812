/**
 * A run's durable events as an async iterator, for A2A's streams: `followEvents` (the API's
 * re-attachable run stream, api/event-stream.ts) pushes, the stream's generator pulls. Ending the
 * iteration (the caller gone, the stream done) stops the follower. With a live text source the
 * model's text comes as it is written, as `message.delta` events, merged with the log as the
 * HTTP API's streams merge it (api/live-merge.ts, decision 0340); the log's whole text brings
 * what the live reading did not.
 */
import type { Client } from '@temporalio/client';
import type { KeelEvent } from '../../common/events';
import { followEvents } from '../streams/event-stream';
import { LiveMerge, type LiveTextSource } from '../streams/live-merge';
import type { ThreadRef } from '../threads/thread-ref';

export interface RunEventsOptions {
  client: Client;
  thread: ThreadRef;
  runId: string;
  /** The first offset to deliver; `base`: the oldest the log holds. */
  fromOffset: number | 'base';
  signal: AbortSignal;
  /** Where a model call's live text is read; without it the text comes whole with the answer. */
  live?: LiveTextSource | undefined;
}

/** The run's events from `fromOffset` on, live after the log's end, until its terminal event. */
export async function* runEvents({
  client,
  thread,
  runId,
  fromOffset,
  signal,
  live,
}: RunEventsOptions): AsyncGenerator<KeelEvent, void, undefined> {
  const stop = new AbortController();
  const onGone = (): void => stop.abort();
  signal.addEventListener('abort', onGone, { once: true });
  const queue: KeelEvent[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  let failure: unknown;
  const deliver = (event: KeelEvent): Promise<void> => {
    queue.push(event);
    wake?.();
    return Promise.resolve();
  };
  // No cursor: every event and piece is new to this stream, and none is held back for a client.
  const merge = new LiveMerge({
    events: { write: deliver, summarize: () => Promise.resolve(), interrupted: false },
    drained: () => Promise.resolve(),
    workflowId: thread.workflow_id,
    cursor: undefined,
    live,
  });
  const following = followEvents({
    client,
    thread,
    runId,
    fromOffset,
    signal: stop.signal,
    onEvent: (offset, event) => merge.onLog(offset, event),
  })
    .finally(() => merge.close())
    .then(
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
