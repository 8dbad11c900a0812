/**
 * A worker for the floor workflow, in its own process like Keel's worker, with the SDK's
 * default options or Keel's worker tuning. Arguments: <temporal address> <task queue> [sdk|keel].
 */
import path from 'node:path';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { keelWorkerTuning } from '../../worker/create-worker';
import { floorActivities } from './activities';

async function main(): Promise<void> {
  const [address, taskQueue, tuning = 'sdk'] = process.argv.slice(2);
  if (address === undefined || taskQueue === undefined)
    throw new Error('usage: worker.ts <address> <task queue> [sdk|keel]');
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    taskQueue,
    workflowsPath: path.join(__dirname, 'workflows.ts'),
    activities: floorActivities,
    ...(tuning === 'keel' ? keelWorkerTuning : {}),
  });
  process.once('SIGTERM', () => worker.shutdown());
  process.stdout.write('floor worker ready\n');
  await worker.run();
  await connection.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
