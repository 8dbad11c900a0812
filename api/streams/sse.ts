/**
 * Server-sent events on a plain Express response (see docs/decisions/0040-sse-on-plain-writes.md):
 * durable events carry `id: <offset>`; `metadata`, `heartbeat` and `end` carry none, so a
 * reconnecting client's `Last-Event-ID` is always the last durable event it saw.
 */
import type { Response } from 'express';
import type { Gauge } from 'prom-client';

export interface SseTimings {
  /** A `heartbeat` event after this much silence (the model is thinking). @default 5000 */
  heartbeatMs: number;
  /** A `: ping` comment this often, whatever else happens, to keep proxies from closing. @default 15000 */
  pingMs: number;
  /** The reconnect delay suggested to clients (`retry:`). @default 1000 */
  retryMs: number;
  /** Longest a stream stays open (`KEEL_STREAM_MAX_S`); then it closes and the client resumes. @default none */
  maxMs?: number | undefined;
}

export const defaultSseTimings: SseTimings = { heartbeatMs: 5_000, pingMs: 15_000, retryMs: 1_000 };

/**
 * How far a client may fall behind before its stream is closed (decision 0314): what a client
 * that reads slowly has not taken is held in the API's memory, and 300 such clients took it from
 * 0.5 to 2.1 GB. It re-attaches with `Last-Event-ID` and misses nothing.
 */
export interface SseBacklog {
  /** Bytes the API may hold for a client beyond what its connection took; past this no event is written. @default 1 MiB */
  maxBufferedBytes: number;
  /** How long a client may leave that buffer undrained. @default 30000 */
  stallMs: number;
}

export const defaultSseBacklog: SseBacklog = { maxBufferedBytes: 1024 * 1024, stallMs: 30_000 };

/**
 * `keel`: Keel's native stream, with `heartbeat` and `end` events. `langgraph`: LangGraph's, whose
 * clients see every event, so silence is filled with a comment and the end is the stream's close.
 */
export type SseStyle = 'keel' | 'langgraph';

/** What the app keeps for its streams in `app.locals`. */
export interface SseLocals {
  streamClients?: Pick<Gauge<'style'>, 'inc' | 'dec'>;
}

export class SseWriter {
  readonly #response: Response;
  readonly #style: SseStyle;
  readonly #backlog: SseBacklog;
  readonly #heartbeat: NodeJS.Timeout;
  readonly #ping: NodeJS.Timeout;
  #lastWriteAt = Date.now();

  constructor(
    response: Response,
    timings: SseTimings,
    style: SseStyle = 'keel',
    backlog: SseBacklog = defaultSseBacklog,
  ) {
    this.#response = response;
    this.#style = style;
    this.#backlog = backlog;
    response.status(200);
    response.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    response.setHeader('Cache-Control', 'no-cache, no-transform');
    response.setHeader('Connection', 'keep-alive');
    response.setHeader('X-Accel-Buffering', 'no');
    response.flushHeaders();
    response.socket?.setNoDelay(true);
    // LangGraph's SDK turns a field-only block into an empty event: its clients get no `retry:`.
    if (style === 'keel') this.#write(`retry: ${timings.retryMs}\n\n`);
    this.#heartbeat = setInterval(
      () => {
        // A client with writes still to take is not idle: nothing to fill.
        if (response.writableNeedDrain || Date.now() - this.#lastWriteAt < timings.heartbeatMs) return;
        if (this.#style === 'keel') this.event('heartbeat', {});
        else {
          this.#write(': heartbeat\n\n');
          this.#lastWriteAt = Date.now();
        }
      },
      Math.max(50, Math.floor(timings.heartbeatMs / 2)),
    );
    this.#ping = setInterval(() => {
      if (!response.writableNeedDrain) this.#write(': ping\n\n');
    }, timings.pingMs);
    response.on('close', () => this.#stopTimers());
    // Counted while the client is connected (the app's metrics, api/app.ts).
    const clients = (response.app.locals as SseLocals).streamClients;
    if (clients !== undefined) {
      clients.inc({ style });
      response.once('close', () => clients.dec({ style }));
    }
  }

  /** Writes one event; `id` only for durable events. */
  event(name: string, data: unknown, id?: number | string): void {
    const lines = [
      ...(id === undefined ? [] : [`id: ${id}`]),
      `event: ${name}`,
      // JSON never contains a raw newline, so one data line is always enough.
      `data: ${JSON.stringify(data)}`,
    ];
    this.#write(`${lines.join('\n')}\n\n`);
    this.#lastWriteAt = Date.now();
  }

  /** Sends `end` (in Keel's style) and closes the response. */
  end(): void {
    if (this.#style === 'keel') this.event('end', {});
    this.close();
  }

  close(): void {
    this.#stopTimers();
    if (!this.#response.writableEnded) this.#response.end();
  }

  /** True while the stream is open (a client too far behind is closed). */
  get open(): boolean {
    return !this.#response.writableEnded && !this.#response.destroyed;
  }

  /**
   * Resolves once the client has taken what was written (at once when it has), so whoever
   * writes next reads no further ahead of it; a client that takes nothing for `stallMs` is
   * closed. False when the stream is closed.
   */
  async drained(): Promise<boolean> {
    const response = this.#response;
    if (!this.open) return false;
    if (!response.writableNeedDrain) return true;
    return new Promise<boolean>((resolve) => {
      const done = (drained: boolean) => {
        clearTimeout(timer);
        response.off('drain', onDrain);
        response.off('close', onClose);
        resolve(drained);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      const timer = setTimeout(() => {
        this.#cutOff();
        done(false);
      }, this.#backlog.stallMs);
      response.on('drain', onDrain);
      response.on('close', onClose);
    });
  }

  #write(text: string): void {
    if (!this.open) return;
    // Behind by more than the backlog: the client re-attaches with Last-Event-ID instead of the
    // API holding ever more for it. Checked before writing, so one large event still goes out.
    if (this.#response.writableLength > this.#backlog.maxBufferedBytes) {
      this.#cutOff();
      return;
    }
    this.#response.write(text);
  }

  /** Ends a stream whose client fell behind: its buffer is dropped with the connection. */
  #cutOff(): void {
    this.#stopTimers();
    this.#response.destroy();
  }

  #stopTimers(): void {
    clearInterval(this.#heartbeat);
    clearInterval(this.#ping);
  }
}
