/**
 * What workflow and API tests share: the run's dev server, a unique task queue and data dir per
 * test, a real worker polling it, and a client.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DataConverter } from '@temporalio/common';
import {
  Client,
  Connection,
  type WorkflowExecutionDescription,
  type WorkflowExecutionInfo,
} from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import { createActivities, type ActivityDependencies } from '../../activities';
import type { KeelActivities } from '../../common/activities';
import { type KeelConfig, parseConfig } from '../../platform/config';
import { keelDataConverter } from '../../codec/data-converter';
import { loadEncryptionKeys } from '../../codec/keys';
import { startLiveTextChannel, type LiveTextChannel } from '../../worker/live-text-server';
import { createKeelWorker } from '../../worker/create-worker';
import type { Tracing } from '../../telemetry/tracing';
import { testDataConverter, testEncryptionKeys } from './encryption';
import { guardedInterceptors } from '../../api/gateway/grpc-closed-guard';

// Worker state changes and the like are noise in test output; warnings and errors still show.
Runtime.install({ logger: new DefaultLogger('WARN') });

export function testAddress(): string {
  const address = process.env.KEEL_TEST_TEMPORAL_ADDRESS;
  if (address === undefined)
    throw new Error('no test Temporal server: run the tests through jest (its global setup starts one)');
  return address;
}

/** A configuration for one test: its own task queue and data dir on the shared server. */
export async function testConfig(env: Record<string, string> = {}): Promise<KeelConfig> {
  const dataDir = await mkdtemp(path.join(process.env.KEEL_TEST_DIR ?? '/tmp', 'data-'));
  return parseConfig(
    {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TEMPORAL_ADDRESS: testAddress(),
      KEEL_TASK_QUEUE: `test-${randomUUID()}`,
      KEEL_DATA_DIR: dataDir,
      KEEL_MODEL: 'scripted:demo',
      KEEL_LOG_LEVEL: 'warn',
      KEEL_ENCRYPTION_KEYS: testEncryptionKeys,
      ...env,
    },
    process.cwd(),
  );
}

let clientPromise: Promise<Client> | undefined;

/** One client per test file. */
export function testClient(): Promise<Client> {
  clientPromise ??= Connection.connect({
    address: testAddress(),
    interceptors: guardedInterceptors(),
  }).then((connection) => new Client({ connection, dataConverter: testDataConverter() }));
  return clientPromise;
}

export async function closeTestClient(): Promise<void> {
  if (clientPromise === undefined) return;
  const client = await clientPromise;
  clientPromise = undefined;
  await client.connection.close();
}

export interface RunningWorker {
  worker: Worker;
  /** Its live text channel (decision 0340); undefined under `KEEL_TOKEN_CHANNEL=history`. */
  live: LiveTextChannel | undefined;
  stop(): Promise<void>;
}

export interface TestWorkerOptions {
  config: KeelConfig;
  /** Replaces or wraps the real activities (for fault injection). */
  activities?: (real: KeelActivities) => KeelActivities;
  /** Wraps the worker's real data converter (to store a payload the way an older worker did). */
  dataConverter?: (real: DataConverter) => DataConverter;
  dependencies?: Omit<ActivityDependencies, 'config'>;
  maxCachedWorkflows?: number;
  /** Where the worker's workflow spans go; a worker exports none without it. */
  tracing?: Tracing;
}

/** A real worker on the test's task queue, running in this process. */
export async function startTestWorker(options: TestWorkerOptions): Promise<RunningWorker> {
  const connection = await NativeConnection.connect({ address: testAddress() });
  const keys = await loadEncryptionKeys(options.config.encryption);
  const live = await startLiveTextChannel(options.config.tokens, keys);
  const real = createActivities({ config: options.config, live: live?.hub, ...options.dependencies });
  const worker = await createKeelWorker({
    connection,
    namespace: options.config.temporal.namespace,
    taskQueue: options.config.taskQueue,
    activities: options.activities?.(real) ?? real,
    dataConverter: options.dataConverter?.(keelDataConverter(keys)) ?? keelDataConverter(keys),
    ...(live === undefined ? {} : { identity: live.identity }),
    workflowBundlePath: process.env.KEEL_TEST_BUNDLE!,
    shutdownGraceS: 2,
    ...(options.maxCachedWorkflows === undefined ? {} : { maxCachedWorkflows: options.maxCachedWorkflows }),
    ...(options.tracing === undefined ? {} : { tracing: options.tracing }),
  });
  const running = worker.run();
  return {
    worker,
    live,
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
      await connection.close();
      await live?.server.close();
    },
  };
}

/** Polls `probe` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  probe: () => Promise<T | undefined>,
  timeoutMs = 20_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await sleep(100);
  }
  throw new Error(
    `timed out waiting for ${what}${lastError instanceof Error ? `: ${lastError.message}` : ''}`,
  );
}

/** Every run of a workflow, as the server lists them: a thread's run and those it handed over from. */
export async function runsOf(client: Client, workflowId: string): Promise<WorkflowExecutionInfo[]> {
  const runs: WorkflowExecutionInfo[] = [];
  for await (const execution of client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
    runs.push(execution);
  return runs;
}

/** A workflow's description once it has closed, however it closed. */
export function closedDescription(
  handle: { describe: () => Promise<WorkflowExecutionDescription> },
  what: string,
  timeoutMs = 60_000,
): Promise<WorkflowExecutionDescription> {
  return eventually(
    async () => {
      const description = await handle.describe();
      return description.status.name === 'RUNNING' ? undefined : description;
    },
    timeoutMs,
    what,
  );
}
