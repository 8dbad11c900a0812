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
}

export const defaultSseTimings: SseTimings = { heartbeatMs: 5_000, pingMs: 15_000, retryMs: 1_000 };

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
  readonly #heartbeat: NodeJS.Timeout;
  readonly #ping: NodeJS.Timeout;
  #lastWriteAt = Date.now();

  constructor(response: Response, timings: SseTimings, style: SseStyle = 'keel') {
    this.#response = response;
    this.#style = style;
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
        if (Date.now() - this.#lastWriteAt < timings.heartbeatMs) return;
        if (this.#style === 'keel') this.event('heartbeat', {});
        else {
          this.#write(': heartbeat\n\n');
          this.#lastWriteAt = Date.now();
        }
      },
      Math.max(50, Math.floor(timings.heartbeatMs / 2)),
    );
    this.#ping = setInterval(() => this.#write(': ping\n\n'), timings.pingMs);
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

  #write(text: string): void {
    if (!this.#response.writableEnded && !this.#response.destroyed) this.#response.write(text);
  }

  #stopTimers(): void {
    clearInterval(this.#heartbeat);
    clearInterval(this.#ping);
  }
}
