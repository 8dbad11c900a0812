/**
 * SSE views of the durable event log: a new run streamed, an existing run re-attached, or the
 * whole thread followed. Streams only read: a client that goes away cancels nothing.
 */
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { isTerminal, type Run } from '../../common/run';
import type { Conversations } from '../conversations';
import { followEvents, requireLiveCursor, type FollowEnd } from '../event-stream';
import { createRunBody } from '../schemas';
import { defaultSseTimings, SseWriter, type SseTimings } from '../sse';
import { clientGone, ownerOf, parseBody, parseQuery, pathId } from '../validate';
import { validationError } from '../errors';
import { submitRunFromBody } from './runs';

const offset = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
const streamQuery = z.object({ starting_after: offset.optional() });

/** The cursor: `Last-Event-ID` (what a reconnecting EventSource sends) wins over `?starting_after`. */
function cursorOf(request: Request): number | undefined {
  const header = request.header('last-event-id');
  if (header !== undefined && header.trim() !== '') {
    const parsed = offset.safeParse(header.trim());
    if (!parsed.success) throw validationError(parsed.error, 'query');
    return parsed.data;
  }
  return parseQuery(streamQuery, request).starting_after;
}

export const runStreamPath = (threadId: string, runId: string): string =>
  `/threads/${threadId}/runs/${runId}/stream`;

export function streamRoutes(conversations: Conversations, timings: SseTimings = defaultSseTimings): Router {
  const router = Router();
  const { client } = conversations;

  /** Streams one run: from after the cursor, or from the run's first event; ends after its last. */
  const streamRun = async (
    threadId: string,
    run: Run,
    cursor: number | undefined,
    request: Request,
    response: Response,
  ): Promise<void> => {
    if (cursor !== undefined) await requireLiveCursor(conversations, threadId, cursor + 1);
    const base = await conversations.streamBase(threadId);
    const first = run.first_event_offset ?? base;
    const fromOffset = cursor === undefined ? Math.max(first, base) : cursor + 1;
    // A finished run's events all lie before the log's end now: replay up to there and stop, even
    // when the cursor is already past its terminal event.
    const untilOffset = isTerminal(run.status) ? await conversations.currentOffset(threadId) : undefined;
    const writer = new SseWriter(response, timings);
    writer.event('metadata', { run_id: run.run_id, thread_id: threadId });
    if (cursor === undefined && first < base && isTerminal(run.status)) {
      // Its events were truncated away: say how it ended, without an id (nothing to resume from).
      writer.event(`run.${run.status}`, { run });
      writer.end();
      return;
    }
    await follow(writer, threadId, run.run_id, fromOffset, untilOffset, request, response);
  };

  const follow = async (
    writer: SseWriter,
    threadId: string,
    runId: string | undefined,
    fromOffset: number | 'base',
    untilOffset: number | undefined,
    request: Request,
    response: Response,
  ): Promise<void> => {
    const end = await followEvents({
      client,
      threadId,
      fromOffset,
      ...(runId === undefined ? {} : { runId }),
      signal: clientGone(request, response),
      ...(untilOffset === undefined ? {} : { untilOffset }),
      onEvent: (at, event) => writer.event(event.event, event.data, at),
    });
    finish(writer, end);
  };

  router.post('/threads/:thread_id/runs/stream', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const run = await submitRunFromBody(conversations, threadId, parseBody(createRunBody, request), response);
    const location = runStreamPath(threadId, run.run_id);
    response.setHeader('Content-Location', location);
    response.setHeader('Location', location);
    // A new run's events start at its first offset; one the thread has not seen yet (handed over
    // by signal while no worker held the thread) starts wherever the log is when it arrives. No
    // read of the log here: the stream opens at once and waits out an outage.
    const writer = new SseWriter(response, timings);
    writer.event('metadata', { run_id: run.run_id, thread_id: threadId });
    await follow(
      writer,
      threadId,
      run.run_id,
      run.first_event_offset ?? 'base',
      undefined,
      request,
      response,
    );
  });

  router.get('/threads/:thread_id/runs/:run_id/stream', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const cursor = cursorOf(request);
    await conversations.authorize(threadId, ownerOf(response));
    const run = await conversations.getRun(threadId, pathId(request, 'run_id'));
    await streamRun(threadId, run, cursor, request, response);
  });

  router.get('/threads/:thread_id/stream', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const cursor = cursorOf(request);
    await conversations.authorize(threadId, ownerOf(response));
    if (cursor !== undefined) await requireLiveCursor(conversations, threadId, cursor + 1);
    // Without a cursor the thread stream is live: it starts with the next event.
    const fromOffset = cursor === undefined ? await conversations.currentOffset(threadId) : cursor + 1;
    const writer = new SseWriter(response, timings);
    writer.event('metadata', { thread_id: threadId });
    await follow(writer, threadId, undefined, fromOffset, undefined, request, response);
  });

  return router;
}

function finish(writer: SseWriter, end: FollowEnd): void {
  if (end === 'client_gone') return writer.close();
  if (end === 'cursor_expired') {
    // No `end`: the client reconnects with its Last-Event-ID and is told 410.
    writer.event('error', {
      code: 'stream_cursor_expired',
      message: 'the event log was truncated past this reader',
    });
    return writer.close();
  }
  writer.end();
}
