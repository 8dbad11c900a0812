/**
 * The worker process. SIGTERM or SIGINT stops polling and lets in-flight activities finish within
 * the grace period (KEEL_SHUTDOWN_GRACE); a second signal exits at once.
 */
import { DefaultLogger, NativeConnection, Runtime, type LogLevel } from '@temporalio/worker';
import type { Logger } from 'pino';
import { createActivities } from '../activities';
import type { KeelConfig } from '../common/config';
import type { TemporalConnectionOptions } from '../cli/env';
import { createKeelWorker } from './create-worker';
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
  Runtime.install({
    logger: new DefaultLogger('WARN', (entry) =>
      logger[levels[entry.level]](entry.meta ?? {}, entry.message),
    ),
    // Keel handles signals itself, so a second signal can force the exit.
    shutdownSignals: [],
  });
  const connection = await NativeConnection.connect(connectionOptions);
  await ensureSearchAttributes(connection, config.temporal.namespace, logger);
  const worker = await createKeelWorker({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.taskQueue,
    activities: createActivities({ config }),
    shutdownGraceS: config.shutdownGraceS,
    ...(config.workflowBundle === undefined ? {} : { workflowBundlePath: config.workflowBundle }),
  });
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals++;
    if (signals > 1) {
      logger.warn({ signal }, 'second signal: exiting without draining');
      process.exit(1);
    }
    logger.info(
      { signal, grace_s: config.shutdownGraceS },
      'shutting down: no new work is polled; in-flight work drains',
    );
    worker.shutdown();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
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
    await connection.close();
  }
  logger.info('worker stopped');
}
