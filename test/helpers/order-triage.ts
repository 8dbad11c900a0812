/**
 * What the order-triage example's tests share: its worker on a namespace and task queue of the
 * test's, and the agent a Nexus operation started.
 */
import type { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { threadIdOf } from '../../common/thread';
import { createOrderTriageWorker } from '../../examples/order-triage/worker';
import { testDataConverter } from './encryption';
import { keelSourceBundlerOptions } from './keel-source';
import { eventually, testAddress } from './temporal';

/** Runs the example's worker on its own connection; `stop` shuts it down and closes that. */
export async function runOrderTriageWorker(options: {
  taskQueue: string;
  namespace?: string;
}): Promise<{ stop: () => Promise<void> }> {
  const connection = await NativeConnection.connect({ address: testAddress() });
  // A new namespace reaches every server component after its cache refreshes.
  const worker = await eventually(
    () =>
      createOrderTriageWorker({
        connection,
        ...(options.namespace === undefined ? {} : { namespace: options.namespace }),
        taskQueue: options.taskQueue,
        dataConverter: testDataConverter(),
        bundlerOptions: keelSourceBundlerOptions,
      }),
    60_000,
    'a worker for the order-triage example',
  );
  const running = worker.run();
  return {
    stop: async () => {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

/** The thread of the agent (its conversation workflow) a Nexus operation started, once it runs. */
export function agentThreadOfOperation(client: Client): Promise<string> {
  return eventually(
    async () => {
      for await (const operation of client.workflow.list({
        query: `WorkflowType = 'agentWorkflow' AND ExecutionStatus = 'Running'`,
      }))
        for await (const child of client.workflow.list({
          query: `ParentWorkflowId = '${operation.workflowId}'`,
        }))
          return threadIdOf(child.workflowId);
      return undefined;
    },
    60_000,
    'the agent the operation started',
  );
}
