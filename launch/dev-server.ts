/**
 * Runs `temporal server start-dev` with its SQLite file in the data dir, Keel's search attributes
 * registered and the Web UI on its port, and waits until it answers.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { allSearchAttributes } from '../common/search-attributes';
import { killGroup, underWatchdog } from './supervisor';

export interface DevServerOptions {
  cliPath: string;
  dataDir: string;
  port: number;
  uiPort: number;
  namespace: string;
  /** Lines the server writes (errors only). */
  onOutput?: (line: string) => void;
  /** The codec server the Web UI decrypts payloads through (Keel's API, `…/codec`). */
  uiCodecEndpoint?: string;
  /** Extra `start-dev` flags, e.g. dynamic config for tests. */
  extraArgs?: string[];
  /**
   * Keep the store in memory, not in a file under `dataDir`: for a server whose data is thrown
   * away with it (each test file's).
   */
  inMemory?: boolean;
}

export interface DevServer {
  process: ChildProcess;
  address: string;
  /** Its SQLite file (none is written under `inMemory`). */
  databaseFile: string;
  uiUrl: string;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** For a forced exit: SIGKILL to it and its watchdog, no waiting. */
  kill(): void;
}

const searchAttributeType: Record<string, string> = {
  KEYWORD: 'Keyword',
  DOUBLE: 'Double',
  INT: 'Int',
  KEYWORD_LIST: 'KeywordList',
};

/**
 * The dynamic config Keel runs its Temporal with (decision 0260): the dev server, the tests' server
 * and the cluster (`launch/cluster/dynamic-config.yaml`, which a unit test holds to these values).
 * - The history shard's transfer-queue reader takes a token before each read of new tasks, 20 a
 *   second per shard by default with a burst of 20. Every hop of a turn (a workflow task, an
 *   activity task) waits for one, so once the burst is spent each hop waited up to 50 ms: a tool
 *   turn took ~300 ms instead of ~100, a long conversation's late turns 1.7× its first ones.
 * - Eager activities: the worker that completes a workflow task may take the activity it
 *   scheduled in the same answer, without a trip through matching (the SDK asks when it has a
 *   free slot; the server's default is off).
 */
export const keelDynamicConfig: ReadonlyArray<readonly [key: string, value: number | boolean]> = [
  ['history.transferProcessorMaxPollRPS', 1000],
  ['system.enableActivityEagerExecution', true],
];

/** `keelDynamicConfig` as `start-dev` flags. */
export function dynamicConfigArgs(): string[] {
  return keelDynamicConfig.flatMap(([key, value]) => [
    '--dynamic-config-value',
    `${key}=${JSON.stringify(value)}`,
  ]);
}

/** `start-dev`'s flags; without `databaseFile` the store is in memory. */
export function devServerArgs(options: DevServerOptions, databaseFile: string | undefined): string[] {
  return [
    'server',
    'start-dev',
    ...(databaseFile === undefined
      ? []
      : // WAL lets readers and the writer work at once; synchronous stays FULL for durability.
        ['--db-filename', databaseFile, '--sqlite-pragma', 'journal_mode=wal']),
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--ui-port',
    String(options.uiPort),
    '--namespace',
    options.namespace,
    '--log-level',
    'error',
    ...allSearchAttributes.flatMap((key) => [
      '--search-attribute',
      `${key.name}=${searchAttributeType[key.type] ?? 'Keyword'}`,
    ]),
    ...(options.uiCodecEndpoint === undefined ? [] : ['--ui-codec-endpoint', options.uiCodecEndpoint]),
    ...dynamicConfigArgs(),
    // Later values of a key win: a test or the benchmark may set one differently.
    ...(options.extraArgs ?? []),
  ];
}

/** Resolves once a Temporal frontend answers at `address`, or rejects after `timeoutMs`. */
export async function waitForTemporal(
  address: string,
  timeoutMs: number,
  alive: () => boolean = () => true,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline && alive()) {
    // One bounded attempt: no retries of its own, a 1 s deadline, so a port held by something
    // that is not Temporal cannot stall the loop.
    const connection = Connection.lazy({ address, interceptors: [] });
    try {
      await connection.withDeadline(Date.now() + 1_000, () => connection.workflowService.getSystemInfo({}));
      return;
    } catch (error) {
      lastError = error;
      await sleep(250);
    } finally {
      await connection.close();
    }
  }
  const reason = lastError instanceof Error ? lastError.message : 'no answer';
  throw new Error(
    `Temporal at ${address} did not answer within ${Math.round(timeoutMs / 1000)} s (${reason})`,
  );
}

export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  await mkdir(options.dataDir, { recursive: true });
  const databaseFile = path.join(options.dataDir, 'temporal.db');
  // Under a watchdog in a process group of its own: it stops when its parent is gone, however
  // the parent ended (decision 0330); a forced stop kills the group.
  const watched = underWatchdog(
    options.cliPath,
    devServerArgs(options, options.inMemory === true ? undefined : databaseFile),
    'SIGTERM',
    15_000,
  );
  const child = spawn(watched.command, watched.args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  child.stdin?.on('error', () => undefined);
  const output: string[] = [];
  const onData = (chunk: Buffer): void => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      output.push(line);
      if (output.length > 50) output.shift();
      options.onOutput?.(line);
    }
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      killGroup(child);
      resolve();
    }),
  );
  const address = `127.0.0.1:${options.port}`;
  try {
    await waitForTemporal(address, 60_000, () => !exited);
  } catch (error) {
    killGroup(child);
    if (!exited) throw error;
    const inUse = output.some((line) => /address already in use/i.test(line));
    const hint = inUse
      ? `port ${options.port} or ${options.uiPort} is in use (another Temporal server?): set TEMPORAL_ADDRESS to use it, or KEEL_TEMPORAL_PORT / KEEL_TEMPORAL_UI_PORT`
      : output.slice(-10).join('\n');
    throw new Error(`the Temporal dev server exited at start: ${hint}`, { cause: error });
  }
  return {
    process: child,
    address,
    databaseFile,
    uiUrl: `http://127.0.0.1:${options.uiPort}`,
    async stop(graceMs = 10_000) {
      if (exited) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => killGroup(child), graceMs);
      await exit;
      clearTimeout(timer);
    },
    kill: () => killGroup(child),
  };
}
