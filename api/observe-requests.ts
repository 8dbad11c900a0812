/**
 * Every request as a server span (continuing a caller's `traceparent`) and in the request
 * metrics, labelled by the route template Express matched: Temporal's client interceptor makes
 * the update or signal the request sends a child of this span, so a run's trace starts here.
 */
import { performance } from 'node:perf_hooks';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { RequestHandler } from 'express';
import type { ApiMetrics } from '../telemetry/api-metrics';
import { tracer } from '../telemetry/tracing';

export function observeRequests(metrics: ApiMetrics): RequestHandler {
  return (request, response, next) => {
    const started = performance.now();
    const parent = propagation.extract(context.active(), request.headers);
    const span = tracer().startSpan(
      request.method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method } },
      parent,
    );
    response.once('close', () => {
      const matched = (request.route as { path?: unknown } | undefined)?.path;
      const route = typeof matched === 'string' ? `${request.baseUrl}${matched}` : 'unmatched';
      const status = response.headersSent ? response.statusCode : 499;
      metrics.requests.inc({ method: request.method, route, status: String(status) });
      const streamed = String(response.getHeader('content-type') ?? '').startsWith('text/event-stream');
      if (!streamed)
        metrics.requestDuration.observe(
          { method: request.method, route },
          (performance.now() - started) / 1000,
        );
      span.updateName(`${request.method} ${route}`);
      span.setAttributes({ 'http.route': route, 'http.response.status_code': status });
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    context.with(trace.setSpan(parent, span), next);
  };
}
