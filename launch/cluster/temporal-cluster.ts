/**
 * The Temporal cluster on this machine: PostgreSQL, the schemas, the four services as separate
 * supervised processes from one generated config, the namespace and search attributes, and the
 * Web UI server. Each program's output goes to a log file under `<data dir>/cluster/logs/`.
 * Stopping goes in reverse: UI, worker, frontend, matching, history, PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import { openSync, closeSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import type { Logger } from 'pino';
import type { KeelConfig } from '../../platform/config';
import { waitForTemporal } from '../dev-server';
import type { Progress } from '../go-install';
import { Supervised } from '../supervisor';
import { ensureClusterBinaries } from './binaries';
import { configEnvironment, writeClusterConfig } from './cluster-config';
import { ensureNamespace } from './namespace';
import type { ClusterPorts, TemporalService } from './ports';
import { preparePostgres, waitForPostgres } from './postgres';
import { setUpSchemas } from './schema';
import { ensureStoreDatabase, storeDatabaseUrl } from './store-database';
import { guardedInterceptors } from '../../api/gateway/grpc-closed-guard';
import { KeelError } from '../../common/errors';

const databaseUser = 'temporal';

export interface TemporalClusterOptions {
  config: KeelConfig;
  ports: ClusterPorts;
  uiCodecEndpoint: string;
  logger: Logger;
  progress: Progress;
  /** Start the Web UI server too. @default true (a test's cluster has no use for one) */
  ui?: boolean;
  /** Dynamic config (YAML) added after Keel's own. @default none */
  extraDynamicConfig?: string;
}

/** Thrown by `start` when `stop` was called while it worked. */
export class ClusterStopped extends KeelError {
  override readonly name = 'ClusterStopped';
}

/** The database password: generated once, kept beside the cluster (mode 0600). */
async function databasePassword(directory: string): Promise<string> {
  const file = path.join(directory, 'postgres-password');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    const password = randomBytes(24).toString('hex');
    await writeFile(file, `${password}\n`, { mode: 0o600, flag: 'wx' });
    return password;
  }
}

export class TemporalCluster {
  readonly directory: string;
  readonly logsDirectory: string;
  readonly frontend: string;
  readonly uiUrl: string;
  /** The Store API's database in this cluster's PostgreSQL; set by `start`. */
  storeUrl: string | undefined;
  readonly processes = new Map<string, Supervised>();
  readonly #started: Supervised[] = [];
  readonly #logFiles: number[] = [];
  #stopped = false;

  constructor(private readonly options: TemporalClusterOptions) {
    this.directory = path.join(options.config.dataDir, 'cluster');
    this.logsDirectory = path.join(this.directory, 'logs');
    this.frontend = `127.0.0.1:${options.ports.grpc.frontend}`;
    this.uiUrl = `http://127.0.0.1:${options.ports.ui}`;
  }

  /** A Temporal service's (or `postgresql`'s, `temporal-ui`'s) supervised process. */
  process(name: TemporalService | 'postgresql' | 'ui'): Supervised {
    const found = this.processes.get(name);
    if (found === undefined) throw new Error(`${name} is not running`);
    return found;
  }

  #check(): void {
    if (this.#stopped) throw new ClusterStopped('stopped while starting');
  }

  #supervise(name: string, command: string, args: string[], stopSignal?: NodeJS.Signals): Supervised {
    this.#check();
    const output = openSync(path.join(this.logsDirectory, `${name}.log`), 'a');
    this.#logFiles.push(output);
    const supervised = new Supervised({
      name,
      command,
      args,
      cwd: this.directory,
      env: { PATH: this.options.config.childEnvironment.PATH ?? '', LANG: 'C.UTF-8' },
      report: this.options.progress,
      output,
      ...(stopSignal === undefined ? {} : { stopSignal }),
    });
    this.#started.push(supervised);
    this.processes.set(name, supervised);
    supervised.start();
    return supervised;
  }

  async start(): Promise<void> {
    const { config, ports, progress } = this.options;
    await mkdir(this.logsDirectory, { recursive: true, mode: 0o700 });
    const binaries = await ensureClusterBinaries(config, progress);
    this.#check();
    const password = await databasePassword(this.directory);
    const postgresDirectory = path.join(this.directory, 'postgresql');
    progress(`Starting PostgreSQL on 127.0.0.1:${ports.postgres} (data in ${postgresDirectory})…`);
    const postgres = await preparePostgres({
      directory: postgresDirectory,
      port: ports.postgres,
      user: databaseUser,
      password,
      searchPath: config.childEnvironment.PATH,
    });
    // SIGINT is PostgreSQL's fast shutdown: sessions end, nothing committed is lost.
    this.#supervise('postgresql', postgres.command, postgres.args, 'SIGINT');
    await waitForPostgres(ports.postgres, 60_000, () => !this.#stopped, config.childEnvironment.PATH);
    this.#check();

    progress('Creating or upgrading the Temporal schemas (temporal-sql-tool)…');
    await setUpSchemas({ sqlTool: binaries.sqlTool, port: ports.postgres, user: databaseUser, password });
    const store = { port: ports.postgres, user: databaseUser, password };
    await ensureStoreDatabase(store);
    this.storeUrl = storeDatabaseUrl(store);
    const files = await writeClusterConfig({
      directory: this.directory,
      ports,
      databaseUser,
      databasePassword: password,
      namespace: config.temporal.namespace,
      uiCodecEndpoint: this.options.uiCodecEndpoint,
      ...(this.options.extraDynamicConfig === undefined
        ? {}
        : { extraDynamicConfig: this.options.extraDynamicConfig }),
    });
    progress('Starting the Temporal services: history, matching, frontend, worker…');
    const serverArgs = [
      '--root',
      files.serverRoot,
      '--config',
      'config',
      '--env',
      configEnvironment,
      '--allow-no-auth',
    ];
    const order: TemporalService[] = ['history', 'matching', 'frontend', 'worker'];
    for (const service of order)
      this.#supervise(service, binaries.server, [...serverArgs, 'start', '--service', service]);
    await waitForTemporal(this.frontend, 120_000, () => !this.#stopped);
    this.#check();

    const connection = await Connection.connect({
      address: this.frontend,
      interceptors: guardedInterceptors(),
    });
    try {
      await ensureNamespace(connection, config.temporal.namespace, this.options.logger);
    } finally {
      await connection.close();
    }
    if (this.options.ui === false) return;
    this.#supervise('ui', binaries.uiServer, [
      '--root',
      files.uiRoot,
      '--config',
      'config',
      '--env',
      configEnvironment,
      'start',
    ]);
  }

  /** Stops whatever was started, in reverse order: UI, worker, frontend, matching, history, PostgreSQL. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const supervised of [...this.#started].reverse()) await supervised.stop(20_000);
    for (const file of this.#logFiles.splice(0)) closeSync(file);
  }

  /** For a forced exit: no waiting. */
  kill(): void {
    this.#stopped = true;
    for (const supervised of this.#started) supervised.kill();
  }
}
