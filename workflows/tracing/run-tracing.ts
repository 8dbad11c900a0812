/** What a traced run's span interceptors give `workflows/tracing-interceptors.ts`. */
import type { WorkflowInboundCallsInterceptor, WorkflowOutboundCallsInterceptor } from '@temporalio/workflow';
import type { IdleStorage } from '../idle-storages';

export interface RunTracing {
  inbound: WorkflowInboundCallsInterceptor;
  outbound: WorkflowOutboundCallsInterceptor;
  /**
   * The storage of the spans' context manager, disabled while the workflow is idle: Node copies every
   * enabled storage into each new promise, so N cached workflows' promises cost O(N²) (0282).
   */
  storage(): IdleStorage | undefined;
  /** As the workflow leaves the cache. */
  dispose(): unknown;
}
