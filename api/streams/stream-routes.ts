/**
 * SSE views of the durable event log: a new run streamed, an existing run re-attached, or the
 * whole thread followed. Streams only read: a client that goes away cancels nothing. Run streams
 * speak LangGraph's stream modes, or Keel's own events with `stream_mode=keel`
 * (docs/decisions/0091-stream-modes.md); the thread stream speaks Keel's.
 */
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { isTerminal, type Run } from '../../common/run';
import { followEvents, requireLiveCursor, type FollowEnd } from './event-stream';
import { LiveMerge, type LiveTextSource } from './live-merge';
import {
  keelStreamMode,
  namesNoStreamMode,
  parseStreamMode,
  protocolStreamModes,
  runStreamSelection,
  streamModeNames,
  streamModeQuery,
  streamModeQueryParameter,
  type StreamSelection,
} from '../protocol/stream-modes';
import {
  resumeOffset,
  runCursorPattern,
  runStreamWriter,
  streamCursorOf,
  threadCursorPattern,
  type RunStreamWriter,
  type StreamCursor,
} from './stream-writer';
import { operation, route } from '../contract';
import { runPath, threadPath } from '../schemas';
import type { ThreadRef } from '../threads/thread-ref';
import { defaultSseTimings, SseWriter, type SseTimings } from './sse';
import { clientGone, ownerOf, pathId } from '../validate';
import { ApiError } from '../errors';
import { startRun, type RunServices } from '../runs/run-submission';
import {
  protocolRunFields,
  statelessRunBody,
  withInputOrCommand,
  type ProtocolRunBody,
} from '../runs/run-schemas';
import { deleteWhenDone, statelessBody } from '../runs/stateless-routes';
import { randomUUID } from 'node:crypto';

const modes = z.enum([...protocolStreamModes, keelStreamMode]);
const { $schema: _dialect, ...streamModeJson } = z.toJSONSchema(
  // null is taken as absent (the default), as the body's other optional fields are.
  z.union([modes, z.array(z.enum(protocolStreamModes)), z.tuple([z.literal(keelStreamMode)]), z.null()]),
);

/**
 * `stream_mode` in a body, read by `parseStreamMode` (its 422s say which mode and why); the
 * document shows the modes it takes.
 */
const streamModeBody = z
  .unknown()
  .transform((value, context) => {
    try {
      return parseStreamMode(value, 'body');
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      const message = error.message.replace(/^body\.stream_mode: /, '');
      context.addIssue({ code: 'custom', message, params: { code: error.code } });
      return z.NEVER;
    }
  })
  .optional()
  .meta({
    ...streamModeJson,
    description: `LangGraph stream modes (default values; null is the default), or "${keelStreamMode}" alone for Keel's native events`,
  });
const runCursor =
  'An event id this run stream sent: `N` (a log event), `N_a_c` or `N:a:c` (live text), and `-k` (`-k.s` after `N:a:c`) within a LangGraph event; `-1` or empty for none';
const threadCursor =
  'An event id this thread stream sent: `N` (a log event), `N_a_c` or `N:a:c` (live text); `-1` or empty for none';

/** A run stream's query: `parseStreamMode` reads the modes from it, `streamCursorOf` the cursor. */
const runStreamQuery = z.object({
  stream_mode: streamModeQueryParameter.describe(
    'A mode, a JSON array of modes, or the parameter repeated; empty or `[]` for none (default: the modes the run was created with)',
  ),
  starting_after: z.string().regex(runCursorPattern).optional().describe(runCursor),
});
/** `Last-Event-ID`, what a reconnecting EventSource sends: the same ids as `starting_after`, and wins over it. */
const lastEventId = (pattern: RegExp, description: string) => ({
  'Last-Event-ID': {
    schema: z.string().regex(pattern),
    description: `${description} (what a reconnecting EventSource sends; wins over starting_after)`,
  },
});
const sse = (description: string) => ({ description, media: ['text/event-stream'] });

export const createRunStream = operation({
  method: 'post',
  path: '/threads/{thread_id}/runs/stream',
  summary:
    'Create a run and stream it (SSE) in the stream modes asked for: metadata, then events with an id each. Content-Location names the run, Location its GET stream',
  params: threadPath,
  body: withInputOrCommand(protocolRunFields.extend({ stream_mode: streamModeBody })),
  responses: { 200: sse('The run, streamed') },
  errors: [404, 409, 429, 503],
  tags: ['stream'],
});

export const statelessRunStream = operation({
  method: 'post',
  path: '/runs/stream',
  summary:
    'A stateless run, streamed: a thread made for it, deleted once the run is over unless on_completion is "keep"',
  body: statelessRunBody.extend({ stream_mode: streamModeBody }),
  responses: { 200: sse('The run, streamed') },
  errors: [404, 409, 429, 503],
  tags: ['stream'],
});

export const streamRunOperation = operation({
  method: 'get',
  path: '/threads/{thread_id}/runs/{run_id}/stream',
  summary:
    'Stream a run (SSE) from its first event, or after `Last-Event-ID` / `starting_after`; a finished run replays and ends. Without `stream_mode`, in the modes the run was created with (`values` for a run not created by a stream). 410 stream_cursor_expired for a cursor older than the log',
  params: runPath,
  headers: lastEventId(runCursorPattern, runCursor),
  query: runStreamQuery,
  responses: { 200: sse('The run, streamed') },
  errors: [410, 503],
  tags: ['stream'],
});

export const streamThread = operation({
  method: 'get',
  path: '/threads/{thread_id}/stream',
  summary: "Follow the thread's events (SSE): live, or after `Last-Event-ID` / `starting_after`",
  params: threadPath,
  headers: lastEventId(threadCursorPattern, threadCursor),
  query: z.object({
    starting_after: z.string().regex(threadCursorPattern).optional().describe(threadCursor),
  }),
  responses: { 200: sse("The thread's events, in Keel's vocabulary") },
  errors: [410, 503],
  tags: ['stream'],
});

export const streamOperations = [createRunStream, statelessRunStream, streamRunOperation, streamThread];

export const runStreamPath = (threadId: string, runId: string): string =>
  `/threads/${threadId}/runs/${runId}/stream`;

const native: StreamSelection = { native: true };

export function streamRoutes(
  services: RunServices,
  stopping?: AbortSignal,
  timings: SseTimings = defaultSseTimings,
  live?: LiveTextSource,
): Router {
  const router = Router();
  const { client } = services.gateway;

  /** An SSE response in the client's vocabulary, its `metadata` event already sent. */
  const open = (response: Response, thread: ThreadRef, run: Run | undefined, selection: StreamSelection) => {
    const writer = new SseWriter(response, timings, selection.native ? 'keel' : 'langgraph');
    const events = runStreamWriter({
      writer,
      selection,
      threadId: thread.thread_id,
      readTranscript: (after) => services.threads.transcript(thread, after),
      readPending: () => services.threads.pendingApprovals(thread),
    });
    writer.event('metadata', {
      ...(run === undefined ? {} : { run_id: run.run_id }),
      thread_id: thread.thread_id,
      ...(selection.native ? {} : { attempt: 1 }),
    });
    return { writer, events };
  };

  /** Streams one run: from after the cursor, or from the run's first event; ends after its last. */
  const streamRun = async (
    thread: ThreadRef,
    run: Run,
    cursor: StreamCursor | undefined,
    selection: StreamSelection,
    request: Request,
    response: Response,
  ): Promise<void> => {
    if (cursor !== undefined) await requireLiveCursor(services.gateway, thread, resumeOffset(cursor));
    const base = await services.gateway.streamBase(thread);
    const first = run.first_event_offset ?? base;
    // A stream re-attached reads the run from its start again and skips what the cursor saw: a
    // LangGraph translation starts where it did, and the model call under way at the cursor,
    // whose live text the client had part of, is known (decision 0340).
    const fromOffset = Math.max(first, base);
    // A finished run's events all lie before the log's end now: replay up to there and stop, even
    // when the cursor is already past its terminal event.
    // So do the events of a run that waits on a human, for a LangGraph client: it was interrupted.
    const waiting = !selection.native && run.status_reason === 'awaiting_approval';
    const untilOffset =
      isTerminal(run.status) || waiting ? await services.gateway.currentOffset(thread) : undefined;
    const { writer, events } = open(response, thread, run, selection);
    if (cursor === undefined && first < base && isTerminal(run.status)) {
      // Its events were truncated away: say how it ended, without an id (nothing to resume from).
      await events.summarize(run.run_id, { event: `run.${run.status}`, data: { run } });
      writer.end();
      return;
    }
    await follow(
      writer,
      events,
      selection,
      thread,
      run.run_id,
      fromOffset,
      untilOffset,
      request,
      response,
      cursor,
      waiting,
    );
  };

  const follow = async (
    writer: SseWriter,
    events: RunStreamWriter,
    selection: StreamSelection,
    thread: ThreadRef,
    runId: string | undefined,
    fromOffset: number | 'base',
    untilOffset: number | undefined,
    request: Request,
    response: Response,
    cursor: StreamCursor | undefined,
    interrupted = false,
  ): Promise<void> => {
    const merge = new LiveMerge({
      events,
      drained: () => writer.drained(),
      workflowId: thread.workflow_id,
      cursor,
      live,
    });
    let end: FollowEnd;
    const bounded = boundedSignal(clientGone(request, response), timings.maxMs);
    try {
      end = await followEvents({
        client,
        thread,
        fromOffset,
        ...(runId === undefined ? {} : { runId }),
        signal: bounded.signal,
        ...(untilOffset === undefined ? {} : { untilOffset }),
        // The next event is read only once the client took this one (api/streams/sse.ts bounds the rest).
        onEvent: async (at, event) => {
          await merge.onLog(at, event);
          await writer.drained();
        },
        // A LangGraph stream ends at an interrupt, as LangGraph's own runs do; `command.resume` goes on.
        stopWhen: selection.native ? undefined : () => events.interrupted,
      });
    } finally {
      bounded.release();
      await merge.close();
    }
    finish(writer, interrupted && end === 'run_finished' ? 'interrupted' : end, selection);
  };

  /** Streams a run just started (or resumed) on `threadId`; resolves with it once the stream ends. */
  const streamNewRun = async (
    threadId: string,
    body: ProtocolRunBody,
    request: Request,
    response: Response,
  ) => {
    const selection = parseStreamMode(
      (request.body as { stream_mode?: unknown } | undefined)?.stream_mode,
      'body',
    );
    const started = await startRun(services, threadId, body, response, {
      streamMode: streamModeNames(selection),
    });
    const { run, thread, resumedFrom } = started;
    const runThread = run.thread_id;
    // LangGraph's SDK reads the run id from Content-Location and reconnects to Location.
    response.setHeader('Content-Location', `/threads/${runThread}/runs/${run.run_id}`);
    response.setHeader('Location', `${runStreamPath(runThread, run.run_id)}?${streamModeQuery(selection)}`);
    // A new run's events start at its first offset; one the thread has not seen yet (handed over
    // by signal while no worker held the thread) starts wherever the log is when it arrives. No
    // read of the log here: the stream opens at once and waits out an outage.
    const { writer, events } = open(response, thread, run, selection);
    await follow(
      writer,
      events,
      selection,
      thread,
      run.run_id,
      resumedFrom ?? run.first_event_offset ?? 'base',
      undefined,
      request,
      response,
      undefined,
    );
    return started;
  };

  route(router, createRunStream, async (request, response, { body: { stream_mode: _mode, ...body } }) => {
    await streamNewRun(pathId(request, 'thread_id'), body, request, response);
  });

  /** A stateless run, streamed; its thread is deleted once it is over unless `on_completion: "keep"`. */
  route(router, statelessRunStream, async (request, response) => {
    const body = statelessBody(request);
    const started = await streamNewRun(randomUUID(), body, request, response);
    await deleteWhenDone(services, body, started, stopping);
  });

  route(router, streamRunOperation, async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const asked = request.query.stream_mode;
    const thread = await services.threads.authorize(threadId, ownerOf(response));
    const run = await services.runs.getRun(thread, pathId(request, 'run_id'));
    // No mode asked: the run's own, as LangGraph's join gives every mode the run streams.
    const selection = namesNoStreamMode(asked) ? runStreamSelection(run) : parseStreamMode(asked, 'query');
    const cursor = streamCursorOf(request, selection);
    await streamRun(thread, run, cursor, selection, request, response);
  });

  route(router, streamThread, async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const cursor = streamCursorOf(request, native, threadCursorPattern);
    const thread = await services.threads.authorize(threadId, ownerOf(response));
    if (cursor !== undefined) await requireLiveCursor(services.gateway, thread, cursor.offset + 1);
    // Without a cursor the thread stream is live: it starts with the next event. With one, it
    // reads the log kept again (skipping what the cursor saw), to know the model call under way:
    // a plain offset after its announcement too, whose client has none of its text yet.
    const fromOffset =
      cursor === undefined
        ? await services.gateway.currentOffset(thread)
        : await services.gateway.streamBase(thread);
    const { writer, events } = open(response, thread, undefined, native);
    await follow(writer, events, native, thread, undefined, fromOffset, undefined, request, response, cursor);
  });

  return router;
}

/**
 * `signal`, aborted as well once the stream has been open `maxMs` (`KEEL_STREAM_MAX_S`): the
 * stream then closes as for a client gone, without `end`, and the client resumes with
 * `Last-Event-ID`. Bounds a stream that would otherwise follow a thread for as long as it lives.
 */
function boundedSignal(
  signal: AbortSignal,
  maxMs: number | undefined,
): { signal: AbortSignal; release: () => void } {
  if (maxMs === undefined) return { signal, release: () => undefined };
  const controller = new AbortController();
  const abort = () => controller.abort();
  const timer = setTimeout(abort, maxMs);
  signal.addEventListener('abort', abort, { once: true });
  return {
    signal: controller.signal,
    release: () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', abort);
    },
  };
}

function finish(writer: SseWriter, end: FollowEnd, selection: StreamSelection): void {
  if (end === 'client_gone') return writer.close();
  if (end === 'interrupted') {
    // The run waits on a human: `end` tells a client that would otherwise ask the run, see it
    // unfinished and reconnect (the Python SDK), that this stream is over until it is resumed.
    if (!selection.native) writer.event('end', null);
    return writer.end();
  }
  if (end === 'cursor_expired') {
    // No `end`: the client reconnects with its Last-Event-ID and is told 410.
    const message = 'the event log was truncated past this reader';
    writer.event(
      'error',
      selection.native
        ? { code: 'stream_cursor_expired', message }
        : { error: 'stream_cursor_expired', message },
    );
    return writer.close();
  }
  writer.end();
}
