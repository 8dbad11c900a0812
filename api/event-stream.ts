/**
 * Following a thread's durable event log from an offset, for SSE. Offsets are contiguous (every
 * event is on one topic), so a jump means the log was truncated under a slow reader: the
 * follower stops with `cursor_expired` instead of silently skipping events, as
 * `WorkflowStreamClient.subscribe` would (it restarts from the log's start on `TruncatedOffset`).
 */
import type { Client } from '@temporalio/client';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { eventsTopic, runIdOf, runTerminalEvents, type KeelEvent } from '../common/events';
import * as messages from '../common/messages';
import { workflowIdFor } from './conversations';
import { ApiError } from './errors';

export type FollowEnd = 'run_finished' | 'thread_closed' | 'client_gone' | 'cursor_expired';

export interface FollowOptions {
  client: Client;
  threadId: string;
  /** The first offset to deliver. */
  fromOffset: number;
  /** Deliver only this run's events, and stop after its terminal event. */
  runId?: string;
  /** Stop on reaching this offset (exclusive): the log's end when the run had already finished. */
  untilOffset?: number;
  signal: AbortSignal;
  onEvent(offset: number, event: KeelEvent): void | Promise<void>;
}

/** The oldest offset the thread's log still holds. */
export function streamBase(client: Client, threadId: string): Promise<number> {
  return client.workflow.getHandle(workflowIdFor(threadId)).query(messages.getStreamBaseQuery);
}

/** 410 `stream_cursor_expired` when `fromOffset` is older than the log. */
export async function requireLiveCursor(client: Client, threadId: string, fromOffset: number): Promise<void> {
  const base = await streamBase(client, threadId);
  if (fromOffset < base)
    throw new ApiError(
      410,
      'stream_cursor_expired',
      `events before offset ${base} are no longer kept; re-read the thread's state and stream without a cursor`,
    );
}

export async function followEvents(options: FollowOptions): Promise<FollowEnd> {
  const { client, threadId, runId, signal } = options;
  let expected = options.fromOffset;
  const until = options.untilOffset ?? Number.POSITIVE_INFINITY;
  if (expected >= until) return 'run_finished';
  try {
    return await client.withAbortSignal(signal, async () => {
      const stream = WorkflowStreamClient.create(client, workflowIdFor(threadId));
      for await (const item of stream.subscribe<KeelEvent>(undefined, expected, {
        resultType: true,
        pollCooldown: '0 milliseconds',
      })) {
        if (item.offset < expected) continue;
        if (item.offset > expected) return 'cursor_expired';
        expected = item.offset + 1;
        const event = item.data;
        if (item.topic !== eventsTopic || (runId !== undefined && runIdOf(event) !== runId)) {
          if (expected >= until) return 'run_finished';
          continue;
        }
        await options.onEvent(item.offset, event);
        if (runId !== undefined && runTerminalEvents.includes(event.event)) return 'run_finished';
        if (expected >= until) return 'run_finished';
      }
      return 'thread_closed';
    });
  } catch (error) {
    if (signal.aborted) return 'client_gone';
    throw error;
  }
}
