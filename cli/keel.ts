/**
 * `keel`: one entry point for every Keel process and command.
 *   keel up       the whole system (what `npm start` runs)
 *   keel worker   a worker process
 *   keel api      the HTTP API process
 */
import { Command } from 'commander';
import { startApi } from '../api/server';
import { connectApiClient } from '../api/temporal-client';
import { runWorker } from '../worker/run-worker';
import { ConfigError, createLogger, loadConfig, temporalConnectionOptions } from './env';
import { up } from './up';

async function apiProcess(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(config, 'api');
  const client = await connectApiClient(temporalConnectionOptions(config), config.temporal.namespace);
  const api = await startApi({ client, config, logger, host: config.api.host, port: config.api.port });
  logger.info({ url: api.url }, 'api ready');
  let stopping = false;
  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'api stopping: no new connections; in-flight requests finish');
    await api.stop();
    await client.connection.close();
    logger.info('api stopped');
    process.exit(0);
  };
  process.on('SIGTERM', (signal) => void stop(signal));
  process.on('SIGINT', (signal) => void stop(signal));
}

async function workerProcess(): Promise<void> {
  const config = loadConfig();
  await runWorker({
    config,
    connectionOptions: temporalConnectionOptions(config),
    logger: createLogger(config, 'worker'),
  });
}

/** One readable line and a non-zero exit for anything that ends a command. */
function fail(error: unknown): never {
  const message =
    error instanceof ConfigError ? error.message : error instanceof Error ? error.message : String(error);
  process.stderr.write(`keel: ${message}\n`);
  process.exit(error instanceof ConfigError ? 2 : 1);
}

const program = new Command('keel').description('Durable AI agents on Temporal').showHelpAfterError();

program
  .command('up')
  .description('start Temporal (dev server), the worker and the API; Ctrl-C stops them in order')
  .action(async () => {
    process.exitCode = await up(loadConfig());
    process.exit();
  });
program.command('worker').description('run a worker process').action(workerProcess);
program.command('api').description('run the HTTP API process').action(apiProcess);

program.parseAsync(process.argv).catch(fail);
