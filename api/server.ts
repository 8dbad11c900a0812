/**
 * The API process: listens on KEEL_API_HOST:KEEL_API_PORT. Stopping closes the listener first,
 * answers waiting requests at once (their runs deferred), lets other in-flight requests finish,
 * then closes what remains; runs are never affected.
 */
import { setMaxListeners } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AppOptions } from './app';
import { createApp } from './app';

export interface RunningApi {
  server: Server;
  url: string;
  /** Stops accepting, waits up to `graceMs` for in-flight requests, then closes every connection. */
  stop(graceMs?: number): Promise<void>;
}

export async function startApi(options: AppOptions & { host: string; port: number }): Promise<RunningApi> {
  const stopping = new AbortController();
  // Every waiting request listens for the stop (and unhooks when it ends), so the count of
  // listeners is the count of waits in flight: past Node's default of 10 that is load, not a leak.
  setMaxListeners(0, stopping.signal);
  const app = createApp({ ...options, stopping: stopping.signal });
  const server = await new Promise<Server>((resolve, reject) => {
    // Express 5 passes a listen error (a taken port) to this callback too.
    const listening = app.listen(options.port, options.host, (error?: NodeJS.ErrnoException) => {
      if (error === undefined) return resolve(listening);
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(
              `the API's port ${options.port} on ${options.host} is in use: stop what listens there, or set KEEL_API_PORT to another port.`,
              { cause: error },
            )
          : error,
      );
    });
  });
  // Long waits (runs/wait, join) must not be cut by Node's default request timeout.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
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
    },
  };
}
