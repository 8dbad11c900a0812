/**
 * Tracing for tests: a worker's spans kept in memory instead of exported over OTLP, the span ids in
 * a history's activity headers, and the ids a replay makes.
 */
import { readFile } from 'node:fs/promises';
import { Resource } from '@opentelemetry/resources';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { defaultPayloadConverter } from '@temporalio/common';
import type { SerializableSpan } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions';
import type { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { loadDataConverter } from '../../codec/data-converter';
import type { KeelConfig } from '../../platform/config';
import type { Tracing } from '../../telemetry/tracing';
import { WorkerMetrics } from '../../telemetry/worker-metrics';
import { codeForWorker } from '../../worker/workflow-bundle';

export interface InMemoryTracing extends Tracing {
  /** Every span the worker's workflows ended so far. */
  spans(): ReadableSpan[];
}

export function inMemoryTracing(): InMemoryTracing {
  const exporter = new InMemorySpanExporter();
  return {
    enabled: true,
    spanProcessor: new SimpleSpanProcessor(exporter),
    resource: new Resource({ 'service.name': 'keel-worker-test' }),
    captureContent: false,
    shutdown: () => exporter.shutdown(),
    spans: () => exporter.getFinishedSpans(),
  };
}

/** The span id in each scheduled activity's trace header (undefined for one without), in order. */
export function scheduledSpanIds(events: temporal.api.history.v1.IHistoryEvent[]): (string | undefined)[] {
  return events
    .map((event) => event.activityTaskScheduledEventAttributes)
    .filter((scheduled) => scheduled !== undefined && scheduled !== null)
    .map((scheduled) => {
      const payload = scheduled.header?.fields?.['_tracer-data'];
      if (payload === undefined || payload === null) return undefined;
      const { traceparent } = defaultPayloadConverter.fromPayload<{ traceparent: string }>(payload);
      return traceparent.split('-')[2]!;
    });
}

/**
 * Replays `history` on a worker that does (`tracing`) or does not export spans, with the test
 * bundle; the ids of the activity-scheduling spans it ends, handed to a sink called during replay.
 * Throws on a determinism error.
 */
export async function replaySchedulingSpans(options: {
  tracing: boolean;
  history: temporal.api.history.v1.IHistory;
  workflowId: string;
  encryption: KeelConfig['encryption'];
}): Promise<string[]> {
  const scheduled: string[] = [];
  await Worker.runReplayHistory(
    {
      workflowBundle: {
        code: codeForWorker(await readFile(process.env.KEEL_TEST_BUNDLE!, 'utf8'), options.tracing),
      },
      dataConverter: await loadDataConverter(options.encryption),
      sinks: {
        ...new WorkerMetrics().sinks(),
        exporter: {
          export: {
            fn: (_info, spans: SerializableSpan[]) => {
              for (const span of spans)
                if (span.name.startsWith('StartActivity:')) scheduled.push(span.spanContext.spanId);
            },
            callDuringReplay: true,
          },
        },
      },
    },
    options.history,
    options.workflowId,
  );
  return scheduled;
}
