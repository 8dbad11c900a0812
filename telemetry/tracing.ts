/**
 * Tracing for one process: a tracer provider that batches spans to an OTLP/HTTP endpoint,
 * registered globally with W3C trace-context propagation (Temporal's interceptors carry it in
 * headers from the API to the workflow and its activities), or nothing at all when tracing is
 * off: the global API then hands out spans that record nothing.
 */
import { context, propagation, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  NoopSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { TracingConfig } from '../platform/telemetry-config';

/** The instrumentation scope of Keel's own spans. */
export const tracerName = 'keel';

export interface Tracing {
  /** Whether spans are exported. */
  enabled: boolean;
  /** Receives the workflow spans the worker's sink hands over (and every other span, when on). */
  spanProcessor: SpanProcessor;
  resource: Resource;
  /** Content of prompts and completions goes on model spans only when the operator opted in. */
  captureContent: boolean;
  /** Flushes what is batched and stops exporting. */
  shutdown(): Promise<void>;
}

export function tracer(): Tracer {
  return trace.getTracer(tracerName);
}

/** Installs tracing for this process (once), as `service` unless `OTEL_SERVICE_NAME` names it. */
export function startTracing(config: TracingConfig | undefined, service: string): Tracing {
  const resource = new Resource({ 'service.name': config?.serviceName ?? service });
  if (config === undefined)
    return {
      enabled: false,
      spanProcessor: new NoopSpanProcessor(),
      resource,
      captureContent: false,
      shutdown: () => Promise.resolve(),
    };
  // Short delays: a run's spans should be visible within a second or two, and a process that
  // is killed loses at most that much.
  const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url: config.tracesUrl }), {
    scheduledDelayMillis: 500,
  });
  const provider = new BasicTracerProvider({ resource, spanProcessors: [spanProcessor] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  return {
    enabled: true,
    spanProcessor,
    resource,
    captureContent: config.captureContent,
    shutdown: () => provider.shutdown(),
  };
}

/** `trace_id` and `span_id` of the active span, for log lines; empty when none records. */
export function traceIds(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (span === undefined || !span.isRecording()) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
