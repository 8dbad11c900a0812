/** Tracing for a test's worker: spans kept in memory instead of exported over OTLP. */
import { Resource } from '@opentelemetry/resources';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Tracing } from '../../telemetry/tracing';

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
