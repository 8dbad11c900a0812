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

export function workerHarness(
  env: () => Record<string, string> = () => ({}),
  options: Omit<TestWorkerOptions, 'config'> = {},
): WorkerHarness {
  const harness = {} as WorkerHarness;
  beforeAll(async () => {
    harness.client = await testClient();
    harness.config = await testConfig(env());
    harness.worker = await startTestWorker({ config: harness.config, ...options });
  });
  afterAll(async () => {
    await harness.worker.stop();
    await closeTestClient();
  });
  return harness;
}
