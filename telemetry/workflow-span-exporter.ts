/**
 * The sink that exports workflow spans (decision 0290), keeping only ids of the workflow on them.
 * Temporal's `makeWorkflowExporter` copies the whole `WorkflowInfo` onto every span as attributes:
 * the memo (a thread's metadata, its title — the first message), search attributes, the last
 * result and failure. A span is seen by whoever reads the tracing backend; a thread's content is
 * not theirs (issue 29, decision 0328). Content goes on model spans only when the operator opts in.
 */
import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { makeWorkflowExporter } from '@temporalio/interceptors-opentelemetry';
import type { WorkflowInfo } from '@temporalio/workflow';

/** What of a workflow's info its spans carry: where it runs and which run it is. */
export const workflowSpanFields = [
  'namespace',
  'taskQueue',
  'workflowId',
  'runId',
  'workflowType',
  'attempt',
  'firstExecutionRunId',
  'continuedFromExecutionRunId',
] as const satisfies ReadonlyArray<keyof WorkflowInfo>;

function idsOf(info: WorkflowInfo): WorkflowInfo {
  const kept: Record<string, unknown> = {};
  for (const field of workflowSpanFields) if (info[field] !== undefined) kept[field] = info[field];
  // Temporal's exporter only spreads it onto the spans' attributes.
  return kept as unknown as WorkflowInfo;
}

/** `makeWorkflowExporter(processor, resource)`, with the workflow's ids instead of its whole info. */
export function makeIdOnlyWorkflowExporter(
  processor: SpanProcessor,
  resource: Resource,
): ReturnType<typeof makeWorkflowExporter> {
  const exporter = makeWorkflowExporter(processor, resource);
  return {
    export: { ...exporter.export, fn: (info, spans) => exporter.export.fn(idsOf(info), spans) },
  };
}
