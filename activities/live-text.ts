/**
 * The live text of the model calls running in this worker (decision 0340): each attempt of a
 * model call keeps the text it has streamed so far, piece by piece as the model sent it, and the
 * worker's live text endpoint (worker/live-text-server.ts) serves it to the API. Nothing of it
 * enters Temporal's history; the answer that counts is the activity's result.
 */
import { BeatRequests } from './beat-requests';

/** Which model call: a workflow's run, step and attempt. */
export interface LiveCallKey {
  workflow_id: string;
  run_id: string;
  step: number;
  attempt: number;
}

export type LiveCallEnd = 'completed' | 'failed';

/** One piece as the model streamed it, and the text's length once it is appended. */
export interface LivePiece {
  text: string;
  chars: number;
}

/** A finished call's text stays readable this long, for a reader that connects late. */
const keptAfterEndMs = 30_000;

const keyOf = (key: LiveCallKey): string => `${key.workflow_id}\n${key.run_id}\n${key.step}\n${key.attempt}`;

export class LiveCall {
  readonly pieces: LivePiece[] = [];
  #chars = 0;
  end: LiveCallEnd | undefined;
  readonly #listeners = new Set<() => void>();

  /** Appends a piece the model streamed. */
  push = (text: string): void => {
    if (text === '' || this.end !== undefined) return;
    this.#chars += text.length;
    this.pieces.push({ text, chars: this.#chars });
    this.#notify();
  };

  /** The whole text streamed so far. */
  text(): string {
    return this.pieces.map((piece) => piece.text).join('');
  }

  finish(end: LiveCallEnd): void {
    if (this.end !== undefined) return;
    this.end = end;
    this.#notify();
  }

  /** Calls `listener` after each change until the returned function is called. */
  watch(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #notify(): void {
    for (const listener of this.#listeners) listener();
  }
}

export class LiveTextHub {
  /**
   * The model calls this worker runs that beat at once when the API asks, so a Stop need not wait
   * for their slow beat to learn of its cancel (decision 0420).
   */
  readonly beats = new BeatRequests();
  readonly #calls = new Map<string, LiveCall>();
  readonly #waiting = new Map<string, Set<(call: LiveCall) => void>>();

  /** Registers an attempt's text; `finish` it when the attempt ends. */
  open(key: LiveCallKey): LiveCall {
    const id = keyOf(key);
    const call = new LiveCall();
    this.#calls.set(id, call);
    const stop = call.watch(() => {
      if (call.end === undefined) return;
      stop();
      setTimeout(() => {
        if (this.#calls.get(id) === call) this.#calls.delete(id);
      }, keptAfterEndMs).unref();
    });
    for (const resolve of this.#waiting.get(id) ?? []) resolve(call);
    this.#waiting.delete(id);
    return call;
  }

  /**
   * The attempt's text, waiting up to `waitMs` for it to be registered: the server may report an
   * attempt started a moment before its code runs.
   */
  async find(key: LiveCallKey, waitMs: number, signal?: AbortSignal): Promise<LiveCall | undefined> {
    const id = keyOf(key);
    const found = this.#calls.get(id);
    if (found !== undefined || waitMs <= 0) return found;
    return new Promise((resolve) => {
      const waiters = this.#waiting.get(id) ?? new Set();
      this.#waiting.set(id, waiters);
      const done = (call: LiveCall | undefined) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        waiters.delete(done);
        if (waiters.size === 0 && this.#waiting.get(id) === waiters) this.#waiting.delete(id);
        resolve(call);
      };
      const onAbort = () => done(undefined);
      const timer = setTimeout(() => done(undefined), waitMs);
      signal?.addEventListener('abort', onAbort);
      waiters.add(done);
    });
  }

  /** Calls registered and not yet forgotten (for tests and the heap report). */
  get size(): number {
    return this.#calls.size;
  }
}

/**
 * A model call's text for the live channel: kept in the hub while the call runs, never published
 * into the workflow. The result says which attempt streamed it, so the workflow can log the whole
 * text once with the answer (`message.delta` with `whole`): a stream that missed live pieces
 * takes the rest from there.
 */
export class LiveTextSink {
  readonly #call: LiveCall;
  readonly #attempt: number;

  constructor(hub: LiveTextHub, key: LiveCallKey) {
    this.#call = hub.open(key);
    this.#attempt = key.attempt;
  }

  push = (text: string): void => this.#call.push(text);

  /** For a call that failed: its readers are told, and go on to the next attempt. */
  close(): Promise<void> {
    this.#call.finish('failed');
    return Promise.resolve();
  }

  /**
   * For a call that succeeded: the attempt, and the streamed text only when it is not the
   * answer's text (a model whose tool calls came through the prompt streams them too).
   */
  finish(answerText: string): Promise<{ streamed: { attempt: number; text?: string } }> {
    this.#call.finish('completed');
    const text = this.#call.text();
    return Promise.resolve({
      streamed: { attempt: this.#attempt, ...(text === answerText ? {} : { text }) },
    });
  }
}
