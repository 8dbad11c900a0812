/** The Keel worker's options, in one place for the worker process, tests and benchmarks. */
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import { type NativeConnection, Worker } from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import type { KeelActivities } from '../common/activities';
import { startTracing, type Tracing } from '../telemetry/tracing';
import { WorkerMetrics } from '../telemetry/worker-metrics';
import { makeIdOnlyWorkflowExporter } from '../telemetry/workflow-span-exporter';
import { agentServiceHandler } from './agent-service';
import { tuneWorkflowHeaps } from './heap';
import { workflowBundleFor } from './workflow-bundle';

export { workflowInterceptorModules, workflowPreloadModules, workflowsPath } from './workflow-bundle';

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
  /** Where the workflows' run and approval metrics go. @default metrics no one reads */
  metrics?: WorkerMetrics;
  /**
   * Where workflow spans go (the process's tracing, `telemetry/tracing.ts`). Workflows are traced
   * only on a worker whose tracing is enabled (decision 0290): elsewhere the spans were made only to
   * be dropped, ~4 ms of a tool turn's ~15 ms on the workflow thread. @default none
   */
  tracing?: Tracing;
}

/** Keel's worker options beyond the SDK's defaults (the benchmark's floor can run with them too). */
export const keelWorkerTuning = {
  // When a worker dies, its sticky queue is abandoned after this, and the conversation
  // continues on another worker (the default, 5 s, adds to every recovery).
  stickyQueueScheduleToStartTimeout: '2 seconds',
  // Cancellation reaches an activity only through a heartbeat response: sending heartbeats
  // each second (instead of every 80 % of the timeout) makes a cancel land within a second. A
  // model call on the live channel beats slowly and at once when the API asks (decision 0420):
  // this throttle then bounds how often asking can make it beat.
  maxHeartbeatThrottleInterval: '1 second',
  defaultHeartbeatThrottleInterval: '1 second',
  // Half the workflow-task pollers on the shared queue, half on this worker's sticky one (the
  // SDK's default gives the shared queue a fifth): under load a new conversation's first task
  // waits on the shared queue while the sticky queue's ongoing ones go first (decision 0286).
  nonStickyToStickyPollRatio: 0.5,
} as const;

export async function createKeelWorker(options: KeelWorkerOptions): Promise<Worker> {
  const metrics = options.metrics ?? new WorkerMetrics();
  const tracing = options.tracing ?? startTracing(undefined, 'keel-worker');
  // The bundle (prebuilt, or built now) tells its workflows whether this worker exports spans.
  const workflowBundle = await workflowBundleFor({
    ...(options.workflowBundlePath === undefined ? {} : { bundlePath: options.workflowBundlePath }),
    tracing: tracing.enabled,
  });
  // Before the SDK starts its workflow threads, whose heaps take the flag.
  tuneWorkflowHeaps();
  return Worker.create({
    connection: options.connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    activities: options.activities,
    nexusServices: [agentServiceHandler],
    dataConverter: options.dataConverter,
    workflowBundle,
    ...(options.maxCachedWorkflows === undefined ? {} : { maxCachedWorkflows: options.maxCachedWorkflows }),
    ...(options.identity === undefined ? {} : { identity: options.identity }),
    shutdownGraceTime: `${options.shutdownGraceS} seconds`,
    // Registered whether or not this worker exports: runs recorded before decision 0290 make spans
    // on every worker (tracing/seeded-spans.ts), and leave them here.
    // The workflow's ids on its spans, never its memo (a thread's title) or results.
    sinks: {
      ...metrics.sinks(),
      exporter: makeIdOnlyWorkflowExporter(tracing.spanProcessor, tracing.resource),
    },
    interceptors: {
      // The workflow interceptors are in the bundle (worker/workflow-bundle.ts).
      activity: [
        (context) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(context),
          outbound: new OpenTelemetryActivityOutboundInterceptor(context),
        }),
      ],
    },
    ...keelWorkerTuning,
  });
}
