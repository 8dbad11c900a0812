/** The Keel worker's options, in one place for the worker process, tests and benchmarks. */
import path from 'node:path';
import { type NativeConnection, Worker } from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import type { KeelActivities } from '../common/activities';
import { agentServiceHandler } from './agent-service';

/** The workflow entry point the bundler starts from. */
export const workflowsPath = path.resolve(__dirname, '../workflows/index.ts');

export interface KeelWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: KeelActivities;
  /** From `codec/data-converter.ts`: every payload the worker sends is encrypted. */
  dataConverter: DataConverter;
  /** A prebuilt bundle (from `worker/bundle.ts`); without one the worker bundles at start. */
  workflowBundlePath?: string;
  /** 0 replays every workflow task from history (used to prove replay safety). */
  maxCachedWorkflows?: number;
  /** Seconds in-flight activities get to finish after shutdown begins. */
  shutdownGraceS: number;
  identity?: string;
}

/** Keel's worker options beyond the SDK's defaults (the benchmark's floor can run with them too). */
export const keelWorkerTuning = {
  // When a worker dies, its sticky queue is abandoned after this, and the conversation
  // continues on another worker (the default, 5 s, adds to every recovery).
  stickyQueueScheduleToStartTimeout: '2 seconds',
  // Cancellation reaches an activity only through a heartbeat response: sending heartbeats
  // each second (instead of every 80 % of the timeout) makes a cancel land within a second.
  maxHeartbeatThrottleInterval: '1 second',
  defaultHeartbeatThrottleInterval: '1 second',
} as const;

export function createKeelWorker(options: KeelWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    activities: options.activities,
    nexusServices: [agentServiceHandler],
    dataConverter: options.dataConverter,
    ...(options.workflowBundlePath === undefined
      ? { workflowsPath }
      : { workflowBundle: { codePath: options.workflowBundlePath } }),
    ...(options.maxCachedWorkflows === undefined ? {} : { maxCachedWorkflows: options.maxCachedWorkflows }),
    ...(options.identity === undefined ? {} : { identity: options.identity }),
    shutdownGraceTime: `${options.shutdownGraceS} seconds`,
    ...keelWorkerTuning,
  });
}
