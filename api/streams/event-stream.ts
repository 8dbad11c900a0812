/**
 * Following a thread's durable event log from an offset, for SSE. Offsets are contiguous (every
 * event is on one topic), so a jump means the log was truncated under a slow reader: the
 * follower stops with `cursor_expired` instead of silently skipping events, as
 * `WorkflowStreamClient.subscribe` would (it restarts from the log's start on `TruncatedOffset`).
 *
 * An open stream outlives outages: when the thread's worker is gone (a deploy, a crash) or
 * Temporal itself is unreachable, the follower keeps the connection (the SSE writer's heartbeats
 * go on) and resumes from the next offset it expects once events flow again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { eventsTopic, runIdOf, runTerminalEvents, type KeelEvent } from '../../common/events';
import { withCallSignal } from '../gateway/call-signal';
import type { ThreadGateway } from '../gateway/thread-gateway';
import { ApiError } from '../errors';
import { isOutage } from '../gateway/intake';
import type { ThreadRef } from '../threads/thread-ref';

export type FollowEnd = 'run_finished' | 'thread_closed' | 'client_gone' | 'cursor_expired' | 'interrupted';

export interface FollowOptions {
  client: Client;
  thread: ThreadRef;
  /** The first offset to deliver; `base`: from the oldest event the log holds (a run not yet seen). */
  fromOffset: number | 'base';
  /** Deliver only this run's events, and stop after its terminal event. */
  runId?: string;
  /** Stop on reaching this offset (exclusive): the log's end when the run had already finished. */
  untilOffset?: number;
  signal: AbortSignal;
  onEvent(offset: number, event: KeelEvent): void | Promise<void>;
  /** Checked after each delivered event: true stops the stream there (`interrupted`). */
  stopWhen?: (() => boolean) | undefined;
}

/** 410 `stream_cursor_expired` when `fromOffset` is older than the log. */
export async function requireLiveCursor(
  gateway: Pick<ThreadGateway, 'streamBase'>,
  thread: ThreadRef,
  fromOffset: number,
): Promise<void> {
  const base = await gateway.streamBase(thread);
  if (fromOffset < base)
    throw new ApiError(
      410,
      'stream_cursor_expired',
      `events before offset ${base} are no longer kept; re-read the thread's state and stream without a cursor`,
    );
}

/** Waits between attempts while the thread or Temporal is unreachable. */
const backoffMs = { first: 250, max: 2_000 };

export async function followEvents(options: FollowOptions): Promise<FollowEnd> {
  const { client, thread, runId, signal } = options;
  let expected: number | undefined = options.fromOffset === 'base' ? undefined : options.fromOffset;
  const until = options.untilOffset ?? Number.POSITIVE_INFINITY;
  if (expected !== undefined && expected >= until) return 'run_finished';
  const handle = client.workflow.getHandle(thread.workflow_id);
  let pause = backoffMs.first;
  while (!signal.aborted) {
    const stream = WorkflowStreamClient.create(client, thread.workflow_id);
    const items = stream.subscribe<KeelEvent>(undefined, expected ?? 0, {
      resultType: true,
      pollCooldown: '0 milliseconds',
    });
    try {
      for (;;) {
        // Each poll under a signal of its own (see call-signal.ts).
        const next = await withCallSignal(client, signal, () => items.next());
        if (next.done === true) break;
        const item = next.value;
        pause = backoffMs.first;
        expected ??= item.offset;
        if (item.offset < expected) continue;
        if (item.offset > expected) return 'cursor_expired';
        const event = item.data;
        if (item.topic !== eventsTopic || (runId !== undefined && runIdOf(event) !== runId)) {
          expected = item.offset + 1;
          if (expected >= until) return 'run_finished';
          continue;
        }
        // Delivered before the cursor moves on: a delivery that reads the thread and meets an
        // outage is retried from this event, not skipped.
        await options.onEvent(item.offset, event);
        expected = item.offset + 1;
        if (runId !== undefined && runTerminalEvents.includes(event.event)) return 'run_finished';
        if (options.stopWhen?.() === true) return 'interrupted';
        if (expected >= until) return 'run_finished';
      }
      // The subscription ended: the thread closed, or a poll was cut short while it still runs.
      const description = await withCallSignal(client, signal, () => handle.describe());
      if (description.status.name !== 'RUNNING') return 'thread_closed';
    } catch (error) {
      if (signal.aborted) return 'client_gone';
      if (error instanceof WorkflowNotFoundError) return 'thread_closed';
      if (!isOutage(error)) throw error;
    } finally {
      await items.return(undefined).catch(() => undefined);
    }
    await sleep(pause, undefined, { signal }).catch(() => undefined);
    pause = Math.min(pause * 2, backoffMs.max);
  }
  return 'client_gone';
}
