/**
 * The worker's `/metrics`: Keel's registry, followed by the Temporal SDK's own metrics, which the
 * SDK's core serves on a loopback port of its own (Runtime telemetry) and this server relays, so
 * Prometheus scrapes one target per worker.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

export interface MetricsServerOptions {
  host: string;
  port: number;
  registry: Registry;
  /** The SDK core's Prometheus endpoint, relayed after Keel's metrics. */
  temporalMetricsUrl?: string;
}

/** A port free on the loopback interface right now (for the SDK core, which must be told one). */
export async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function temporalMetrics(url: string | undefined): Promise<string> {
  if (url === undefined) return '';
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    return response.ok ? await response.text() : '';
  } catch {
    // Keel's own metrics are still worth a scrape while the SDK's exporter is not up.
    return '';
  }
}

export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const server: Server = createServer((request, response) => {
    if (request.method !== 'GET' || (request.url ?? '').split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try GET /metrics\n');
      return;
    }
    void Promise.all([options.registry.metrics(), temporalMetrics(options.temporalMetricsUrl)]).then(
      ([keel, temporal]) => {
        response.writeHead(200, { 'content-type': options.registry.contentType });
        response.end(temporal === '' ? keel : `${keel}\n${temporal}`);
      },
      (error: unknown) => {
        response.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(error)}\n`);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(
              `the worker's metrics port ${options.port} on ${options.host} is in use: stop what listens there, or set KEEL_WORKER_METRICS_PORT to another port.`,
              { cause: error },
            )
          : error,
      ),
    );
    server.listen(options.port, options.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
