/**
 * The API process: listens on KEEL_API_HOST:KEEL_API_PORT. Stopping closes the listener first,
 * answers waiting requests at once (their runs deferred), lets other in-flight requests finish,
 * then closes what remains; runs are never affected.
 */
import { setMaxListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { AppOptions } from './app';
import { configuredStore, createApp } from './app';
import { ApiError } from './errors';

/**
 * How long a client may take to send a request's headers, and the whole request with its body
 * (at most 1 MiB). Node counts only the receiving: a response, however long (a stream, a waited
 * run), is not limited by these (decision 0313). The configuration's (`KEEL_API_HEADERS_TIMEOUT_MS`,
 * `KEEL_API_REQUEST_TIMEOUT_MS`) unless `startApi` is given others.
 */
export interface RequestTimeouts {
  /** @default 5000 */
  headersMs: number;
  /** @default 10000 */
  requestMs: number;
}

/** A raw answer in the API's error shape, for a request Express never saw. */
function rawAnswer(status: number, reason: string, error: ApiError): string {
  const body = JSON.stringify(error.body());
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/**
 * What Node answers a request it could not read (its `socketOnError`), but a timeout in the
 * error shape: Node's own 408 has no body. Nothing is written once a response has begun.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket, timeouts: RequestTimeouts): void {
  // Node sets `_httpMessage` to null once a response is done with the socket, not undefined.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent: boolean } | null })._httpMessage;
  if (socket.writable && inFlight?.headersSent !== true) {
    if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      const message = `the request was not received in time: headers within ${timeouts.headersMs / 1000} s, the whole request within ${timeouts.requestMs / 1000} s`;
      socket.write(rawAnswer(408, 'Request Timeout', new ApiError(408, 'request_timeout', message)));
    } else if (error.code === 'HPE_HEADER_OVERFLOW')
      socket.write('HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n');
    else socket.write('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
  }
  socket.destroy(error);
}

export interface RunningApi {
  server: Server;
  url: string;
  /** Stops accepting, waits up to `graceMs` for in-flight requests, then closes every connection. */
  stop(graceMs?: number): Promise<void>;
}

export async function startApi(
  options: AppOptions & { host: string; port: number; requestTimeouts?: RequestTimeouts },
): Promise<RunningApi> {
  const timeouts = options.requestTimeouts ?? options.config.api.requestTimeouts;
  const stopping = new AbortController();
  // Every waiting request listens for the stop (and unhooks when it ends), so the count of
  // listeners is the count of waits in flight: past Node's default of 10 that is load, not a leak.
  setMaxListeners(0, stopping.signal);
  const store = options.store ?? configuredStore(options.config);
  const app = createApp({ ...options, store, stopping: stopping.signal });
  const server = createServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      // Node checks both timeouts this often (its default, 30 s, would let a slow body stay 40 s).
      connectionsCheckingInterval: Math.min(1_000, timeouts.headersMs),
    },
    app,
  );
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) =>
    answerClientError(error, socket, timeouts),
  );
  await new Promise<void>((resolve, reject) => {
    server.listen(options.port, options.host, () => resolve());
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(
              `the API's port ${options.port} on ${options.host} is in use: stop what listens there, or set KEEL_API_PORT to another port.`,
              { cause: error },
            )
          : error,
      ),
    );
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    server,
    url: `http://${host}:${port}`,
    async stop(graceMs = 10_000) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // Waits (runs/wait, join) answer now with their run deferred instead of holding the stop.
      stopping.abort();
      const timer = setTimeout(() => server.closeAllConnections(), graceMs);
      await closed;
      clearTimeout(timer);
      await store.close();
    },
  };
}
