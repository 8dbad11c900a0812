/**
 * The set-up most workflow and API tests share, registered once per `describe`: a client, a
 * configuration of the test's own (task queue, data dir) and a real worker polling it, stopped
 * after the last test. Read its fields inside tests and hooks (they are set in `beforeAll`).
 * `fleetHarness` is the same for tests of real worker processes (chaos tests).
 */
import type { Client } from '@temporalio/client';
import type { KeelConfig } from '../../platform/config';
import {
  closeTestClient,
  startTestWorker,
  testClient,
  testConfig,
  type RunningWorker,
  type TestWorkerOptions,
} from './temporal';
import { WorkerFleet } from './worker-process';

export interface WorkerHarness {
  client: Client;
  config: KeelConfig;
  worker: RunningWorker;
}

/**
 * What a harness built on this one adds (an API, a browser): `afterStart` runs once the worker
 * polls, `beforeStop` before it stops. jest-circus runs `afterAll` hooks in the order they were
 * declared, so a later hook of the test file's own would run after the worker is gone; these
 * keep the teardown the reverse of the set-up.
 */
export interface HarnessHooks<H> {
  afterStart?(harness: H): Promise<void>;
  beforeStop?(harness: Partial<H>): Promise<void>;
}

export function workerHarness<H extends WorkerHarness = WorkerHarness>(
  env: () => Record<string, string> = () => ({}),
  options: Omit<TestWorkerOptions, 'config'> = {},
  hooks: HarnessHooks<H> = {},
): H {
  return registerHarness<H>({
    env,
    start: async (harness) => {
      harness.worker = await startTestWorker({ config: harness.config, ...options });
    },
    stop: async (started) => {
      await started.worker?.stop();
    },
    hooks,
  });
}

/** Client and configuration in `beforeAll`, then what `start` adds; the reverse in `afterAll`. */
function registerHarness<H extends { client: Client; config: KeelConfig }>(parts: {
  env: () => Record<string, string>;
  start(harness: H): Promise<void> | void;
  stop(started: Partial<H>): Promise<void>;
  hooks: HarnessHooks<H>;
}): H {
  const harness = {} as H;
  beforeAll(async () => {
    harness.client = await testClient();
    harness.config = await testConfig(parts.env());
    await parts.start(harness);
    await parts.hooks.afterStart?.(harness);
  });
  afterAll(async () => {
    // A set-up that failed half-way leaves some fields unset: stop what did start.
    const started: Partial<H> = harness;
    await parts.hooks.beforeStop?.(started);
    await parts.stop(started);
    await closeTestClient();
  });
  return harness;
}

export interface FleetHarness {
  client: Client;
  config: KeelConfig;
  /** Real `keel worker` processes on the harness's task queue, started by each test. */
  fleet: WorkerFleet;
}

/**
 * `workerHarness` for tests that kill and replace real worker processes: the same client and
 * configuration, and a fleet instead of a worker. Each test owns its workers: every one is
 * SIGKILLed after the test, as a survivor would take the next test's tasks. `workerEnv` adds to
 * the queue and data dir each worker gets (it is read at each start).
 */
export function fleetHarness<H extends FleetHarness = FleetHarness>(
  options: {
    /** Configuration variables of the test's own, as for `testConfig`. */
    env?: () => Record<string, string>;
    workerEnv?: (harness: H) => Record<string, string>;
  } = {},
  hooks: HarnessHooks<H> = {},
): H {
  const harness = registerHarness<H>({
    env: options.env ?? (() => ({})),
    start: (started) => {
      started.fleet = new WorkerFleet(() => ({
        KEEL_TASK_QUEUE: started.config.taskQueue,
        KEEL_DATA_DIR: started.config.dataDir,
        ...options.workerEnv?.(started),
      }));
    },
    stop: async (started) => {
      await started.fleet?.stopAll();
    },
    hooks,
  });
  afterEach(async () => {
    await (harness as Partial<H>).fleet?.stopAll();
  });
  return harness;
}
