/**
 * Writing a run stream in the vocabulary the client chose, with an `id:` on every durable event.
 *
 * One Keel event (offset N) may become several LangGraph events: the last carries id `N`, the
 * ones before it `N-0`, `N-1`…, so `Last-Event-ID: N` still means "everything through offset N"
 * and `N-k` resumes inside offset N without a gap or a repeat (its translation is deterministic).
 */
import type { Request } from 'express';
import type { KeelEvent } from '../../common/events';
import type { PendingApproval } from '../../common/approvals';
import type { Message } from '../../common/transcript';
import { ApiError } from '../errors';
import type { SseWriter } from '../sse';
import { ProtocolTranslator } from './run-stream';
import type { StreamSelection } from './stream-modes';

/** What a client has seen: every event through `offset`, or (with `within`) part of offset's. */
export interface StreamCursor {
  offset: number;
  within?: number;
}

export const cursorPattern = /^(\d{1,15})(?:-(\d{1,6}))?$/;

/** `Last-Event-ID` (wins) or `?starting_after`: `N`, or `N-k` on a LangGraph stream. */
export function streamCursorOf(request: Request, selection: StreamSelection): StreamCursor | undefined {
  const header = request.header('last-event-id')?.trim();
  const query = request.query.starting_after;
  const raw = header !== undefined && header !== '' ? header : query;
  // LangGraph's "-1" means "from the run's first event", as no cursor at all (useStream sends it).
  if (raw === undefined || raw === '-1') return undefined;
  const match = typeof raw === 'string' ? cursorPattern.exec(raw) : null;
  if (match === null || (selection.native && match[2] !== undefined))
    throw new ApiError(
      422,
      'validation_error',
      `query.starting_after: must be an event id this stream sent`,
      'starting_after',
    );
  return { offset: Number(match[1]), ...(match[2] === undefined ? {} : { within: Number(match[2]) }) };
}

/** The first offset to read again for a cursor. */
export const resumeOffset = (cursor: StreamCursor): number =>
  cursor.within === undefined ? cursor.offset + 1 : cursor.offset;

export interface RunStreamWriter {
  /** Writes one durable Keel event, translated when the client chose LangGraph's modes. */
  write(offset: number, event: KeelEvent): Promise<void>;
  /** For a run whose events were truncated away: how it ended, without ids. */
  summarize(runId: string, terminal: KeelEvent): Promise<void>;
  /** True once the run was seen waiting on a human (a LangGraph stream ends there). */
  readonly interrupted: boolean;
}

export function runStreamWriter(options: {
  writer: SseWriter;
  selection: StreamSelection;
  threadId: string;
  cursor: StreamCursor | undefined;
  readTranscript: (after?: number) => Promise<Message[]>;
  readPending: () => Promise<PendingApproval[]>;
}): RunStreamWriter {
  const { writer, selection, cursor } = options;
  if (selection.native)
    return {
      write: (offset, event) => Promise.resolve(writer.event(event.event, event.data, offset)),
      summarize: (_runId, terminal) => Promise.resolve(writer.event(terminal.event, terminal.data)),
      interrupted: false,
    };
  // A resumed LangGraph stream translates the run from its start (so what a translation carries
  // over from earlier events, such as a message accumulated so far, is as it was) and writes
  // only what comes after the cursor.
  const seen = (offset: number, index: number): boolean =>
    cursor !== undefined &&
    (offset < cursor.offset ||
      (offset === cursor.offset && (cursor.within === undefined || index <= cursor.within)));
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
    async write(offset, event) {
      const events = await translator.translate(event);
      events.forEach((translated, index) => {
        if (seen(offset, index)) return;
        const id = index === events.length - 1 ? String(offset) : `${offset}-${index}`;
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
