/** The long-running processes `keel api` and `keel worker` start: config and connections in, one process out. */
import { startApi } from '../api/server';
import { connectApiClient } from '../api/gateway/temporal-client';
import { loadDataConverter } from '../codec/data-converter';
import { ApiMetrics } from '../telemetry/api-metrics';
import { startTracing } from '../telemetry/tracing';
import { runWorker } from '../worker/run-worker';
import { temporalConnectionOptions } from '../platform/connection';
import { createLogger, loadConfig } from './env';
import { refusedExitCode } from './supervisor';

/**
 * How long a stopping API lets in-flight requests finish. Waits answer at once (their runs
 * deferred); what remains open past this is a live stream, which its client re-attaches to by
 * `Last-Event-ID`: before, an open web chat held every stop for the full ten seconds.
 */
const apiStopGraceMs = 3_000;

/** A taken port ends the process with one sentence and the refused exit code: a restart cannot help. */
function refuseTakenPort(error: unknown): void {
  const cause = error instanceof Error ? (error.cause as NodeJS.ErrnoException | undefined) : undefined;
  if (cause?.code !== 'EADDRINUSE') return;
  process.stderr.write(`keel: ${(error as Error).message}\n`);
  process.exit(refusedExitCode);
}

export async function apiProcess(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config, 'api');
  // Before the client: its interceptor reads the global tracer provider and propagator.
  const tracing = startTracing(config.telemetry.tracing, 'keel-api');
  if (tracing.enabled)
    logger.info({ endpoint: config.telemetry.tracing?.tracesUrl }, 'traces exported over OTLP');
  const client = await connectApiClient(
    temporalConnectionOptions(config),
    config.temporal.namespace,
    await loadDataConverter(config.encryption),
  );
  const api = await startApi({
    client,
    config,
    logger,
    host: config.api.host,
    port: config.api.port,
    metrics: new ApiMetrics().withProcessMetrics(),
  }).catch((error: unknown) => {
    refuseTakenPort(error);
    throw error;
  });
  logger.info({ url: api.url }, 'api ready');
  let stopping = false;
  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    // A second signal is an operator who will not wait: it used to be ignored.
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting without waiting for in-flight requests');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'api stopping: no new connections; in-flight requests finish');
    await api.stop(apiStopGraceMs);
    await client.connection.close();
    await tracing.shutdown();
    logger.info('api stopped');
    process.exit(0);
  };
  process.on('SIGTERM', (signal) => void stop(signal));
  process.on('SIGINT', (signal) => void stop(signal));
}

export async function workerProcess(): Promise<void> {
  const config = loadConfig();
  await runWorker({
    config,
    connectionOptions: temporalConnectionOptions(config),
    logger: createLogger(config, 'worker'),
  }).catch((error: unknown) => {
    refuseTakenPort(error);
    throw error;
  });
}
