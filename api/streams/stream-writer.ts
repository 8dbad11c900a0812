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
import {
  nativeStreamIdSource,
  parseStreamId,
  streamIdSource,
  type StreamPosition,
} from '../../common/stream-ids';
import type { PendingApproval } from '../../common/approvals';
import type { Message } from '../../common/transcript';
import { ApiError } from '../errors';
import type { SseWriter } from './sse';
import { ProtocolTranslator } from '../protocol/run-stream';
import type { StreamSelection } from '../protocol/stream-modes';

/**
 * What a client has seen: every log event through `offset`, and of the model call under way
 * then, `live.chars` characters of attempt `live.attempt` (`piece`: the id was a live piece's);
 * with `within`, only part of the last event's translation (-1: none of it).
 */
export type StreamCursor = StreamPosition;

/**
 * A cursor as a run stream takes it (`Last-Event-ID` or `starting_after`): any id a run stream
 * sends, in either vocabulary; `-1` (LangGraph's "from the first event", which `useStream`
 * sends) and the empty string are no cursor.
 */
export const runCursorPattern = new RegExp(`^(?:|-1|${streamIdSource})$`);

/** A cursor as the thread stream takes it: an id of Keel's native events (it sends no other). */
export const threadCursorPattern = new RegExp(`^(?:|-1|${nativeStreamIdSource})$`);

/**
 * `Last-Event-ID` (wins) or `?starting_after`, one of the ids `pattern` allows; 422 naming the
 * one that is not. On a native stream a cursor inside a LangGraph event's translation (`N-k`) has
 * not had all of it: Keel's vocabulary has one event there, which is sent again.
 */
export function streamCursorOf(
  request: Request,
  selection: StreamSelection,
  pattern: RegExp = runCursorPattern,
): StreamCursor | undefined {
  const header = request.header('last-event-id')?.trim();
  const fromHeader = header !== undefined && header !== '';
  const raw = fromHeader ? header : request.query.starting_after;
  const cursor = typeof raw === 'string' && pattern.test(raw) ? parseStreamId(raw) : undefined;
  if (cursor === undefined && raw !== undefined && raw !== '' && raw !== '-1') {
    const param = fromHeader ? 'Last-Event-ID' : 'starting_after';
    throw new ApiError(
      422,
      'validation_error',
      `${fromHeader ? 'header' : 'query'}.${param}: must be an event id this stream sent`,
      param,
    );
  }
  if (cursor !== undefined && selection.native && cursor.within !== undefined)
    return { ...cursor, within: -1 };
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
