/**
 * The system a benchmark runs against, started from scratch: its own Temporal dev server
 * (SQLite with WAL, in a temporary directory), a `keel worker` process and a `keel api` process,
 * exactly as `keel up` runs them, plus a client for the benchmark's own Temporal calls.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { randomBytes } from 'node:crypto';
import { keelDataConverter } from '../codec/data-converter';
import { parseConfig } from '../platform/config';
import { type DevServer, startDevServer } from '../launch/dev-server';
import { ensureTemporalCli, temporalCliVersion } from '../launch/temporal-cli';
import { buildWorkflowBundle } from '../worker/bundle';
import { progress } from './progress';

const root = path.resolve(__dirname, '..');

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** CPU seconds (user + system) and resident memory of one process, from /proc. */
export async function processStats(pid: number): Promise<{ cpuS: number; rssBytes: number } | undefined> {
  try {
    const [stat, status] = await Promise.all([
      readFile(`/proc/${pid}/stat`, 'utf8'),
      readFile(`/proc/${pid}/status`, 'utf8'),
    ]);
    // Fields after the command name (which may hold spaces) start at ")"; utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    return { cpuS: ticks / 100, rssBytes: rssKb * 1024 };
  } catch {
    return undefined;
  }
}

export interface KeelProcess {
  name: string;
  child: ChildProcess;
  pid: number;
  /** The process's last lines of output, for error messages. */
  output: string[];
  exited: Promise<void>;
  kill(signal: NodeJS.Signals): void;
  /** SIGTERM, SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** Spawns `node --import tsx <script> <args>` and waits until a log line matches `ready`. */
export async function spawnNode(
  name: string,
  script: string,
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  nodeArgs: string[] = [],
): Promise<KeelProcess> {
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script, ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  let isReady = false;
  let wake: () => void = () => undefined;
  const onData = (chunk: Buffer): void => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      output.push(line);
      if (output.length > 40) output.shift();
      if (!isReady && ready.test(line)) {
        isReady = true;
        wake();
      }
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = once(child, 'exit').then(() => undefined);
  await new Promise<void>((resolve, reject) => {
    wake = resolve;
    void exited.then(() => reject(new Error(`${name} exited before it was ready:\n${output.join('\n')}`)));
    setTimeout(() => reject(new Error(`${name} not ready in 120 s:\n${output.join('\n')}`)), 120_000).unref();
  });
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  return {
    name,
    child,
    pid: child.pid!,
    output,
    exited,
    kill(signal) {
      if (alive()) child.kill(signal);
    },
    async stop(graceMs = 15_000) {
      if (!alive()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface MachineInfo {
  cores: number;
  cpu_model: string;
  memory_bytes: number;
  os: string;
  node: string;
  temporal_cli: string;
  temporal_sdk: string;
  keel_commit: string;
}

const run = promisify(execFile);

export interface System {
  dir: string;
  server: DevServer;
  client: Client;
  /**
   * A client without Keel's codec, for the floor workflow: its worker has none, and an encrypted
   * input would fail its every workflow task (the floor hung on this since encryption at rest).
   */
  floorClient: Client;
  cliPath: string;
  bundlePath: string;
  taskQueue: string;
  /** Environment shared by the worker and API processes. */
  env: Record<string, string>;
  worker: KeelProcess;
  api: KeelProcess;
  apiUrl: string;
  /** Starts one more `keel worker` process (the current one is replaced in `worker`). */
  startWorker(extraEnv?: Record<string, string>): Promise<KeelProcess>;
  /** Starts one more `keel api` process on a port of its own (an owner quota, say); stop it after. */
  startApi(extraEnv: Record<string, string>): Promise<{ process: KeelProcess; url: string }>;
  machine(): Promise<MachineInfo>;
  stop(): Promise<void>;
}

export interface SystemOptions {
  /** Extra environment for the worker and the API (e.g. a fake model server). */
  env?: Record<string, string>;
  /** Extra `node` options for the worker and the API (e.g. `--cpu-prof`, bench/profile-turns.ts). */
  nodeArgs?: { worker?: string[]; api?: string[] };
}

/** Starts the dev server, a worker and the API; everything lives in a fresh temporary directory. */
export async function startSystem(options: SystemOptions = {}): Promise<System> {
  const config = parseConfig(process.env, process.cwd());
  const cliPath = await ensureTemporalCli(config, (line) => progress.note(line));
  const dir = await mkdtemp(path.join(os.tmpdir(), 'keel-bench-'));
  const [port, uiPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  progress.note('starting the Temporal dev server and bundling the workflow');
  const [server, bundle] = await Promise.all([
    startDevServer({
      cliPath,
      dataDir: dir,
      port,
      uiPort,
      namespace: 'default',
      // The server runs Keel's dynamic config (decision 0260); `KEEL_BENCH_DEV_SERVER_ARGS=
      // '--dynamic-config-value history.transferProcessorMaxPollRPS=20'` measures another setting
      // (a later value of a key wins; bench/results/history.md, "Cheaper turns").
      extraArgs: (process.env.KEEL_BENCH_DEV_SERVER_ARGS ?? '').split(' ').filter((arg) => arg !== ''),
    }),
    buildWorkflowBundle(),
  ]);
  const bundlePath = path.join(dir, 'workflow-bundle.js');
  await writeFile(bundlePath, bundle);
  // Histories of long conversations come in pages larger than gRPC's 4 MiB default.
  const connection = await Connection.connect({
    address: server.address,
    channelArgs: { 'grpc.max_receive_message_length': 256 * 2 ** 20 },
  });
  // One key for the run, as a cluster's processes share one: the worker and the API get it too.
  const encryptionKey = { id: 'bench', key: randomBytes(32) };
  const client = new Client({ connection, dataConverter: keelDataConverter([encryptionKey]) });
  const taskQueue = 'keel-bench';
  const env: Record<string, string> = {
    TEMPORAL_ADDRESS: server.address,
    KEEL_TASK_QUEUE: taskQueue,
    KEEL_DATA_DIR: path.join(dir, 'data'),
    KEEL_MODEL: 'scripted:demo',
    KEEL_APPROVAL: 'auto',
    KEEL_WORKFLOW_BUNDLE: bundlePath,
    KEEL_LOG_FORMAT: 'json',
    KEEL_LOG_LEVEL: 'warn',
    KEEL_API_HOST: '127.0.0.1',
    KEEL_API_PORT: String(apiPort),
    KEEL_ENCRYPTION_KEYS: `${encryptionKey.id}:${encryptionKey.key.toString('base64')}`,
    // `KEEL_LOCAL_MODEL_CALLS=1 npm run bench` measures waited runs with local model calls.
    ...(process.env.KEEL_LOCAL_MODEL_CALLS === undefined
      ? {}
      : { KEEL_LOCAL_MODEL_CALLS: process.env.KEEL_LOCAL_MODEL_CALLS }),
    // `KEEL_WAIT_VALUES_CHARS=0` measures waited runs whose values are read by query (0255).
    ...(process.env.KEEL_WAIT_VALUES_CHARS === undefined
      ? {}
      : { KEEL_WAIT_VALUES_CHARS: process.env.KEEL_WAIT_VALUES_CHARS }),
    ...options.env,
  };
  const startWorker = (extraEnv: Record<string, string> = {}) =>
    spawnNode(
      'worker',
      'cli/keel.ts',
      ['worker'],
      { ...env, KEEL_LOG_LEVEL: 'info', ...extraEnv },
      /worker ready/,
      options.nodeArgs?.worker,
    );
  progress.note('starting the worker and the API');
  const [worker, api] = await Promise.all([
    startWorker(),
    spawnNode(
      'api',
      'cli/keel.ts',
      ['api'],
      { ...env, KEEL_LOG_LEVEL: 'info' },
      /api ready/,
      options.nodeArgs?.api,
    ),
  ]);
  const system: System = {
    dir,
    server,
    client,
    floorClient: new Client({ connection }),
    cliPath,
    bundlePath,
    taskQueue,
    env,
    worker,
    api,
    apiUrl: `http://127.0.0.1:${apiPort}`,
    async startWorker(extraEnv) {
      system.worker = await startWorker(extraEnv);
      return system.worker;
    },
    async startApi(extraEnv) {
      const port = await freePort();
      const started = await spawnNode(
        'api',
        'cli/keel.ts',
        ['api'],
        { ...env, KEEL_LOG_LEVEL: 'info', ...extraEnv, KEEL_API_PORT: String(port) },
        /api ready/,
        options.nodeArgs?.api,
      );
      return { process: started, url: `http://127.0.0.1:${port}` };
    },
    async machine() {
      const [cli, commit] = await Promise.all([
        run(cliPath, ['--version']).then((out) => out.stdout.trim()),
        run('git', ['rev-parse', '--short', 'HEAD'], { cwd: root }).then(
          (out) => out.stdout.trim(),
          () => 'unknown',
        ),
      ]);
      const sdk = JSON.parse(
        await readFile(path.join(root, 'node_modules/@temporalio/worker/package.json'), 'utf8'),
      ) as { version: string };
      return {
        cores: os.cpus().length,
        cpu_model: os.cpus()[0]?.model ?? 'unknown',
        memory_bytes: os.totalmem(),
        os: `${os.type()} ${os.release()}`,
        node: process.version,
        temporal_cli: `temporal CLI v${temporalCliVersion} (${cli})`,
        temporal_sdk: sdk.version,
        keel_commit: commit,
      };
    },
    async stop() {
      await system.api.stop();
      await system.worker.stop();
      await connection.close();
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return system;
}

/** Waits until `probe` is truthy, polling every `everyMs`. */
export async function until(probe: () => Promise<boolean>, timeoutMs: number, what: string, everyMs = 100) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await sleep(everyMs);
  }
  throw new Error(`timed out waiting for ${what}`);
}
