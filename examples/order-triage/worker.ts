/**
 * The example's worker: it runs the order-triage workflows on its own task queue. It needs no
 * Keel activities; it needs Keel's data converter, because the agent's input and result travel
 * through Temporal encrypted with Keel's keys.
 *
 *   npm run build   # keel/* resolve to the build outside Keel's tests (docs/decisions/0350)
 *   TEMPORAL_ADDRESS=127.0.0.1:7233 KEEL_ENCRYPTION_KEYS=… npx tsx examples/order-triage/worker.ts
 */
import path from 'node:path';
import type { DataConverter } from '@temporalio/common';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { parseConfig } from 'keel/config';
import { loadDataConverter } from 'keel/data-converter';

export const orderTriageTaskQueue = 'order-triage';

export interface OrderTriageWorkerOptions {
  connection: NativeConnection;
  namespace?: string;
  taskQueue?: string;
  dataConverter: DataConverter;
  /** Passed to the workflow bundler (Keel's own tests resolve `keel/*` to its sources with it). */
  bundlerOptions?: WorkerOptions['bundlerOptions'];
}

export function createOrderTriageWorker(options: OrderTriageWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace ?? 'default',
    taskQueue: options.taskQueue ?? orderTriageTaskQueue,
    workflowsPath: path.join(__dirname, 'workflows.ts'),
    // Keel's: its codec encrypts payloads, and its failure converter (which the bundle takes
    // from here) keeps failure messages inside the encrypted payloads.
    dataConverter: options.dataConverter,
    ...(options.bundlerOptions === undefined ? {} : { bundlerOptions: options.bundlerOptions }),
  });
}

async function main(): Promise<void> {
  const config = parseConfig(process.env, process.cwd());
  const connection = await NativeConnection.connect({ address: config.temporal.address ?? '127.0.0.1:7233' });
  const worker = await createOrderTriageWorker({
    connection,
    namespace: config.temporal.namespace,
    dataConverter: await loadDataConverter(config.encryption),
  });
  console.log(`order-triage worker polling ${orderTriageTaskQueue}`);
  await worker.run();
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
