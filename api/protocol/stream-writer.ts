/**
 * Writing a run stream in the vocabulary the client chose, with an `id:` on every event
 * (docs/decisions/0340-live-text-from-the-worker.md):
 *
 * - a log event at offset N: `N`; written while a model call's live text is under way, after the
 *   client had `c` characters of its attempt `a`: `N_a_c`;
 * - a piece of live text, after log event N: `N:a:c`, `c` the attempt's characters through it.
 *
 * One Keel event may become several LangGraph events: the last carries the id, the ones before it
 * the id and `-0`, `-1`…, so an id still means "everything through this event" and `…-k` resumes
 * inside it without a gap or a repeat (its translation is deterministic).
 */
import type { Request } from 'express';
import type { KeelEvent } from '../../common/events';
import { parseStreamId, streamIdPattern, type StreamPosition } from '../../common/stream-ids';
import type { PendingApproval } from '../../common/approvals';
import type { Message } from '../../common/transcript';
import { ApiError } from '../errors';
import type { SseWriter } from '../sse';
import { ProtocolTranslator } from './run-stream';
import type { StreamSelection } from './stream-modes';

/**
 * What a client has seen: every log event through `offset`, and of the model call under way
 * then, `live.chars` characters of attempt `live.attempt` (`piece`: the id was a live piece's);
 * with `within`, only part of the last event's translation.
 */
export type StreamCursor = StreamPosition;

export const cursorPattern = streamIdPattern;

/** `Last-Event-ID` (wins) or `?starting_after`: an id this stream sent (`N-k` only on a LangGraph stream). */
export function streamCursorOf(request: Request, selection: StreamSelection): StreamCursor | undefined {
  const header = request.header('last-event-id')?.trim();
  const query = request.query.starting_after;
  const raw = header !== undefined && header !== '' ? header : query;
  // LangGraph's "-1" means "from the run's first event", as no cursor at all (useStream sends it).
  if (raw === undefined || raw === '-1') return undefined;
  const cursor = typeof raw === 'string' ? parseStreamId(raw) : undefined;
  if (cursor === undefined || (selection.native && cursor.within !== undefined))
    throw new ApiError(
      422,
      'validation_error',
      `query.starting_after: must be an event id this stream sent`,
      'starting_after',
    );
  return cursor;
}

/** The first offset to read again for a cursor. */
export const resumeOffset = (cursor: StreamCursor): number =>
  cursor.within === undefined ? cursor.offset + 1 : cursor.offset;

/** Where an event goes in the stream: its id, and which parts of its translation the client had. */
export interface StreamMark {
  id: string;
  /** After `-k` in the ids of all but the last event (a live piece's start). */
  withinSuffix?: string;
  seen(index: number): boolean;
}

export interface RunStreamWriter {
  /** Writes one Keel event, translated when the client chose LangGraph's modes, but what was seen. */
  write(event: KeelEvent, mark: StreamMark): Promise<void>;
  /** For a run whose events were truncated away: how it ended, without ids. */
  summarize(runId: string, terminal: KeelEvent): Promise<void>;
  /** True once the run was seen waiting on a human (a LangGraph stream ends there). */
  readonly interrupted: boolean;
}

export function runStreamWriter(options: {
  writer: SseWriter;
  selection: StreamSelection;
  threadId: string;
  readTranscript: (after?: number) => Promise<Message[]>;
  readPending: () => Promise<PendingApproval[]>;
}): RunStreamWriter {
  const { writer, selection } = options;
  if (selection.native)
    return {
      write: (event, mark) => {
        if (!mark.seen(0)) writer.event(event.event, event.data, mark.id);
        return Promise.resolve();
      },
      summarize: (_runId, terminal) => Promise.resolve(writer.event(terminal.event, terminal.data)),
      interrupted: false,
    };
  // A resumed LangGraph stream translates the run from its start (so what a translation carries
  // over from earlier events, such as a message accumulated so far, is as it was) and writes
  // only what comes after the cursor.
  const translator = new ProtocolTranslator(
    selection.modes,
    options.threadId,
    options.readTranscript,
    options.readPending,
  );
  return {
    get interrupted() {
      return translator.interrupted;
    },
    async write(event, mark) {
      const events = await translator.translate(event);
      events.forEach((translated, index) => {
        if (mark.seen(index)) return;
        const id = index === events.length - 1 ? mark.id : `${mark.id}-${index}${mark.withinSuffix ?? ''}`;
        writer.event(translated.event, translated.data, id);
      });
    },
    async summarize(runId, terminal) {
      const events = [
        ...(await translator.finalValues(runId)),
        ...(terminal.event === 'run.failed' ? await translator.translate(terminal) : []).filter(
          (translated) => translated.event === 'error',
        ),
      ];
      for (const translated of events) writer.event(translated.event, translated.data);
    },
  };
}
