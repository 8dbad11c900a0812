/**
 * The set-up most workflow and API tests share, registered once per `describe`: a client, a
 * configuration of the test's own (task queue, data dir) and a real worker polling it, stopped
 * after the last test. Read its fields inside tests and hooks (they are set in `beforeAll`).
 */
import type { Client } from '@temporalio/client';
import type { KeelConfig } from '../../common/config';
import {
  closeTestClient,
  startTestWorker,
  testClient,
  testConfig,
  type RunningWorker,
  type TestWorkerOptions,
} from './temporal';

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
export interface HarnessHooks<H extends WorkerHarness> {
  afterStart?(harness: H): Promise<void>;
  beforeStop?(harness: Partial<H>): Promise<void>;
}

export function workerHarness<H extends WorkerHarness = WorkerHarness>(
  env: () => Record<string, string> = () => ({}),
  options: Omit<TestWorkerOptions, 'config'> = {},
  hooks: HarnessHooks<H> = {},
): H {
  const harness = {} as H;
  beforeAll(async () => {
    harness.client = await testClient();
    harness.config = await testConfig(env());
    harness.worker = await startTestWorker({ config: harness.config, ...options });
    await hooks.afterStart?.(harness);
  });
  afterAll(async () => {
    // A set-up that failed half-way leaves some fields unset: stop what did start.
    const started: Partial<H> = harness;
    await hooks.beforeStop?.(started);
    await started.worker?.stop();
    await closeTestClient();
  });
  return harness;
}
