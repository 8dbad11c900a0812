/**
 * One stream of Keel events from two sources (decision 0340): the thread's durable log, and the
 * live text of the model call under way, read from the worker that runs it. Live pieces become
 * `message.delta` events, as the log's deltas were, so every vocabulary translates them alike.
 *
 * The ids say what a client had (api/streams/stream-writer.ts): a re-attaching stream reads the
 * log again from the run's start and the live text from the attempt's start, writes nothing the
 * cursor covers, and feeds it all to the translation, whose state (a message accumulated so far)
 * is then what it was. The log's `whole` delta, written with the answer, brings the text a stream
 * has not had: a stream that came late, or a call that ended before its worker was found.
 */
import type { KeelEvent } from '../../common/events';
import { runTerminalEvents } from '../../common/events';
import type { LiveCallRef, LivePiece } from './live-text-reader';
import type { RunStreamWriter, StreamCursor, StreamMark } from './stream-writer';

export type LiveTextSource = (call: LiveCallRef, signal: AbortSignal) => AsyncIterable<LivePiece>;

interface CallState {
  runId: string;
  step: number;
  /** The attempt whose text the stream carries, and its characters written or fed so far. */
  attempt: number;
  chars: number;
  done: boolean;
  /** What the cursor says the client had of this call. */
  seen?: { attempt: number; chars: number; piece: boolean; within?: number; start?: number } | undefined;
  reader?: AbortController;
}

export interface LiveMergeOptions {
  events: RunStreamWriter;
  /** Resolves once the client took what was written (backpressure). */
  drained(): Promise<unknown>;
  workflowId: string;
  cursor: StreamCursor | undefined;
  /** Undefined on the history channel: the log carries the text. */
  live: LiveTextSource | undefined;
}

const callKey = (runId: string, step: number): string => `${runId}\n${step}`;

export class LiveMerge {
  readonly #options: LiveMergeOptions;
  readonly #calls = new Map<string, CallState>();
  #current: CallState | undefined;
  /** The offset of the last log event handled: a live piece's id begins with it. */
  #lastOffset = -1;
  #positioned: boolean;
  /** Writes one at a time, in order, whichever source they come from. */
  #queue: Promise<void> = Promise.resolve();
  readonly #readers = new Set<Promise<void>>();

  constructor(options: LiveMergeOptions) {
    this.#options = options;
    this.#positioned = options.cursor === undefined;
  }

  /** A log event, in offset order. */
  onLog(offset: number, event: KeelEvent): Promise<void> {
    return this.#serially(async () => {
      const cursor = this.#options.cursor;
      if (!this.#positioned && cursor !== undefined && offset > cursor.offset) this.#position();
      await this.#log(offset, event);
      this.#lastOffset = offset;
      if (!this.#positioned && cursor !== undefined && offset >= cursor.offset) this.#position();
    });
  }

  /** Stops reading live text and waits for what is being written. */
  async close(): Promise<void> {
    for (const call of this.#calls.values()) call.reader?.abort();
    await Promise.all(this.#readers);
    await this.#queue;
  }

  async #log(offset: number, event: KeelEvent): Promise<void> {
    const { events } = this.#options;
    const mark = (): StreamMark => ({
      id: this.#logId(offset),
      seen: (index) => this.#logSeen(offset, index),
    });
    switch (event.event) {
      case 'message.started': {
        const call = this.#call(event.data.run_id, event.data.step);
        this.#calls.set(callKey(call.runId, call.step), call);
        this.#current = call;
        if (this.#positioned) this.#read(call);
        return events.write(event, mark());
      }
      case 'message.delta': {
        // The history channel: the log carries the text itself, and its offsets say what was had.
        if (event.data.whole !== true) return events.write(event, mark());
        const { run_id, step, attempt, text } = event.data;
        const call = this.#calls.get(callKey(run_id, step)) ?? this.#call(run_id, step);
        this.#calls.set(callKey(run_id, step), call);
        return this.#whole(call, attempt, text, mark);
      }
      default:
        if (runTerminalEvents.includes(event.event)) this.#end(event);
        return events.write(event, mark());
    }
  }

  /** The call's whole text, logged with its answer: what the stream has not carried of it. */
  async #whole(call: CallState, attempt: number, text: string, mark: () => StreamMark): Promise<void> {
    this.#finish(call);
    const delta = (part: string): KeelEvent => ({
      event: 'message.delta',
      data: { run_id: call.runId, step: call.step, attempt, text: part },
    });
    if (attempt !== call.attempt) Object.assign(call, { attempt, chars: 0 });
    const seen = call.seen;
    // What the client had before it re-attached, though this stream never read it live: fed to
    // the translation, not written; a piece the client had only part of, as that piece.
    if (seen !== undefined && seen.attempt === attempt && seen.chars > call.chars) {
      const start = seen.within === undefined ? seen.chars : Math.max(call.chars, seen.start ?? 0);
      if (start > call.chars)
        await this.#options.events.write(delta(text.slice(call.chars, start)), { id: '', seen: () => true });
      if (seen.chars > start)
        await this.#options.events.write(delta(text.slice(start, seen.chars)), {
          id: this.#pieceId(attempt, seen.chars),
          withinSuffix: `.${start}`,
          seen: (index) => index <= seen.within!,
        });
      call.chars = seen.chars;
    }
    const rest = text.slice(call.chars);
    call.chars = text.length;
    if (rest !== '') await this.#options.events.write(delta(rest), mark());
  }

  #call(runId: string, step: number): CallState {
    return { runId, step, attempt: 0, chars: 0, done: false };
  }

  #end(event: KeelEvent): void {
    const runId = 'run' in event.data ? event.data.run.run_id : undefined;
    for (const call of this.#calls.values()) if (call.runId === runId) this.#finish(call);
  }

  #finish(call: CallState): void {
    call.done = true;
    call.reader?.abort();
    if (this.#current === call) this.#current = undefined;
  }

  /** The stream has reached its cursor: the call under way then is the one the cursor's text is of. */
  #position(): void {
    this.#positioned = true;
    const { cursor } = this.#options;
    const current = this.#current;
    if (current !== undefined && cursor?.live !== undefined)
      current.seen = {
        ...cursor.live,
        ...(cursor.live.piece && cursor.within !== undefined
          ? { within: cursor.within, start: cursor.start ?? 0 }
          : {}),
      };
    for (const call of this.#calls.values()) if (!call.done) this.#read(call);
  }

  #logId(offset: number): string {
    const call = this.#current;
    return call === undefined || call.done || call.chars === 0
      ? String(offset)
      : `${offset}_${call.attempt}_${call.chars}`;
  }

  #logSeen(offset: number, index: number): boolean {
    const cursor = this.#options.cursor;
    if (cursor === undefined || offset > cursor.offset) return false;
    if (offset < cursor.offset || cursor.live?.piece === true) return true;
    return cursor.within === undefined || index <= cursor.within;
  }

  #read(call: CallState): void {
    const source = this.#options.live;
    if (source === undefined || call.reader !== undefined || call.done) return;
    const reader = new AbortController();
    call.reader = reader;
    const ref = { workflowId: this.#options.workflowId, runId: call.runId, step: call.step };
    const reading = (async () => {
      for await (const piece of source(ref, reader.signal)) {
        if (reader.signal.aborted) return;
        await this.#serially(() => this.#piece(call, piece));
      }
    })()
      // Live text is a view: losing it loses nothing, for the answer brings its whole text.
      .catch(() => undefined)
      .finally(() => this.#readers.delete(reading));
    this.#readers.add(reading);
  }

  async #piece(call: CallState, piece: LivePiece): Promise<void> {
    if (call.done || piece.attempt < call.attempt) return;
    // A retried attempt starts its text afresh, under a chunk id of its own.
    if (piece.attempt > call.attempt) Object.assign(call, { attempt: piece.attempt, chars: 0 });
    // Pieces again after a reconnection to the same attempt: already carried.
    if (piece.chars <= call.chars) return;
    const text = piece.text.slice(Math.max(0, piece.text.length - (piece.chars - call.chars)));
    call.chars = piece.chars;
    const seen = call.seen;
    const event: KeelEvent = {
      event: 'message.delta',
      data: { run_id: call.runId, step: call.step, attempt: piece.attempt, text },
    };
    await this.#options.events.write(event, {
      id: this.#pieceId(piece.attempt, piece.chars),
      withinSuffix: `.${piece.chars - text.length}`,
      seen: (index) =>
        seen !== undefined &&
        seen.attempt === piece.attempt &&
        (piece.chars < seen.chars ||
          (piece.chars === seen.chars && (seen.within === undefined || index <= seen.within))),
    });
    await this.#options.drained();
  }

  #pieceId(attempt: number, chars: number): string {
    return `${Math.max(0, this.#lastOffset)}:${attempt}:${chars}`;
  }

  #serially(work: () => Promise<void>): Promise<void> {
    const next = this.#queue.then(work);
    this.#queue = next.catch(() => undefined);
    return next;
  }
}
