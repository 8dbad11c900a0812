/**
 * The worker process. SIGTERM or SIGINT stops polling and lets in-flight activities finish within
 * the grace period (KEEL_SHUTDOWN_GRACE); a second signal exits at once.
 */
import { DefaultLogger, NativeConnection, Runtime, type LogLevel } from '@temporalio/worker';
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { builtinTools, createActivities } from '../activities';
import { ExtensionHost } from '../activities/extensions';
import { ToolRegistry } from '../activities/tools';
import { configuredStore } from '../store/configured-store';
import { describeSandbox } from '../activities/tools/bash';
import { stopCommandRunner } from '../activities/tools/command-runner';
import { activitySlots, processBudgetWarning, processLimitOf } from '../activities/tools/process-budget';
import { Sandbox } from '../activities/tools/sandbox';
import { keelDataConverter } from '../codec/data-converter';
import { loadEncryptionKeys } from '../codec/keys';
import type { KeelConfig } from '../platform/config';
import type { TemporalConnectionOptions } from '../platform/connection';
import { freeLoopbackPort, startMetricsServer, type MetricsServer } from '../telemetry/metrics-server';
import { startTracing } from '../telemetry/tracing';
import { WorkerMetrics } from '../telemetry/worker-metrics';
import { createKeelWorker } from './create-worker';
import { startLiveTextChannel } from './live-text-server';
import { shutdownGraceOver } from '../activities/shutdown';
import { withDrainLog } from './drain-log';
import { installHeapProbe } from './heap-probe';
import { ensureSearchAttributes } from './search-attributes';

const levels: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

export interface RunWorkerOptions {
  config: KeelConfig;
  connectionOptions: TemporalConnectionOptions;
  logger: Logger;
}

export async function runWorker({ config, connectionOptions, logger }: RunWorkerOptions): Promise<void> {
  const { workerMetrics } = config.telemetry;
  // The SDK core serves its own metrics on a loopback port; /metrics relays them (metrics-server.ts).
  const temporalMetricsPort = workerMetrics === undefined ? undefined : await freeLoopbackPort();
  // Once per process, before any connection or worker.
  Runtime.install({
    logger: new DefaultLogger('WARN', (entry) =>
      logger[levels[entry.level]](entry.meta ?? {}, entry.message),
    ),
    // Keel handles signals itself, so a second signal can force the exit.
    shutdownSignals: [],
    ...(temporalMetricsPort === undefined
      ? {}
      : {
          telemetryOptions: {
            metrics: {
              prometheus: { bindAddress: `127.0.0.1:${temporalMetricsPort}`, useSecondsForDurations: true },
            },
          },
        }),
  });
  const tracing = startTracing(config.telemetry.tracing, 'keel-worker');
  const metrics = new WorkerMetrics().withProcessMetrics();
  let metricsServer: MetricsServer | undefined;
  if (workerMetrics !== undefined) {
    metricsServer = await startMetricsServer({
      ...workerMetrics,
      registry: metrics.registry,
      temporalMetricsUrl: `http://127.0.0.1:${temporalMetricsPort}/metrics`,
    });
    logger.info({ url: metricsServer.url }, 'worker metrics served');
  }
  if (tracing.enabled)
    logger.info({ endpoint: config.telemetry.tracing?.tracesUrl }, 'traces exported over OTLP');
  // Before connecting: a missing or unusable key stops the worker at start, not at its first task.
  const keys = await loadEncryptionKeys(config.encryption);
  const dataConverter = keelDataConverter(keys);
  const live = await startLiveTextChannel(config.tokens, keys);
  if (live !== undefined) logger.info({ url: live.server.url }, 'live text served');
  const connection = await NativeConnection.connect(connectionOptions);
  await ensureSearchAttributes(connection, config.temporal.namespace, logger);
  const sandbox = new Sandbox(config.sandbox, config.childEnvironment.PATH);
  // Not awaited: a worker polls at once (a replacement after a crash should not wait), and the
  // bash tool awaits the same probe before its first command.
  void describeSandbox(sandbox, config.sandbox.network).then((state) => {
    if (state.ok)
      logger.info({ sandbox: state.line, isolation: sandbox.isolation }, 'commands run in a sandbox');
    else logger.warn({ sandbox: config.sandbox.mode }, state.line);
  });
  if (config.sandbox.mode === 'on') {
    const warning = processBudgetWarning({
      root: sandbox.isolation === 'a uid per workspace',
      limit: processLimitOf(await readFile('/proc/self/limits', 'utf8').catch(() => '')),
      perCall: config.sandbox.limits.processes,
      concurrentCalls: activitySlots,
    });
    if (warning !== undefined) logger.warn({ sandbox: config.sandbox.mode }, warning);
  }
  const registry = new ToolRegistry(builtinTools);
  const extensions =
    config.extensionsFile === undefined
      ? undefined
      : await ExtensionHost.start({
          file: config.extensionsFile,
          registry,
          logger: logger.child({ component: 'extensions' }),
          environment: config.childEnvironment,
        });
  // The memory tools' Store (decision 0450): opened at the first memory call, with the keys above.
  const store = configuredStore(config, () => Promise.resolve(keys));
  const drain = withDrainLog(
    createActivities({
      config,
      registry,
      store,
      sandbox,
      telemetry: { metrics, captureContent: tracing.captureContent },
      live: live?.hub,
      identity: live?.identity,
    }),
    logger,
  );
  const worker = await createKeelWorker({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.taskQueue,
    activities: drain.activities,
    dataConverter,
    shutdownGraceS: config.shutdownGraceS,
    metrics,
    tracing,
    ...(live === undefined ? {} : { identity: live.identity }),
    ...(config.workflowBundle === undefined ? {} : { workflowBundlePath: config.workflowBundle }),
  });
  let signals = 0;
  let shutdownStartedAt: number | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals++;
    if (signals > 1) {
      logger.warn({ signal }, 'second signal: exiting without draining');
      process.exit(1);
    }
    shutdownStartedAt = Date.now();
    logger.info(
      { signal, grace_s: config.shutdownGraceS, in_flight: drain.beginDrain() },
      'shutting down: no new work is polled; in-flight work drains',
    );
    worker.shutdown();
    // Local activities are not cancelled by the SDK at the grace's end: they are told here.
    setTimeout(shutdownGraceOver, config.shutdownGraceS * 1000).unref();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // The memory benchmark's probe of the workflow threads' heaps (worker/heap-probe.ts); off unless set.
  installHeapProbe(config.heapReportFile, (error) => logger.warn({ err: error }, 'heap probe failed'));
  process.on('SIGHUP', () => {
    logger.info('SIGHUP: reloading extensions');
    void extensions?.reload();
  });
  logger.info(
    {
      task_queue: config.taskQueue,
      namespace: config.temporal.namespace,
      address: connectionOptions.address,
      model: config.model.default,
    },
    'worker ready',
  );
  try {
    await worker.run();
  } finally {
    // Commands ended with the drain; their runner, in a session of its own, ends with the worker,
    // first, so that nothing after it that fails can leave it behind.
    await stopCommandRunner();
    // After the drain: an in-flight extension call needed its server until now.
    await extensions
      ?.stop()
      .catch((error: unknown) => logger.warn({ err: error }, 'extensions did not stop'));
    await connection.close();
    await store.close().catch((error: unknown) => logger.warn({ err: error }, 'the store did not close'));
    await live?.server.close();
    await metricsServer?.close();
    await tracing.shutdown();
  }
  logger.info(
    shutdownStartedAt === undefined ? {} : { drain_ms: Date.now() - shutdownStartedAt },
    'worker stopped',
  );
}
