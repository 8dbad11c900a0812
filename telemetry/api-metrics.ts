/**
 * Keel's metrics in the API (Prometheus, through prom-client): requests by route template (never
 * a raw path, so thread ids stay out of labels), their latency, and the streams open right now.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export class ApiMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'keel_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly requestDuration = new Histogram({
    name: 'keel_http_request_duration_seconds',
    help: 'HTTP requests, received to answered (event streams left out: they last as long as their client)',
    labelNames: ['method', 'route'] as const,
    buckets: latencyBuckets,
    registers: [this.registry],
  });
  /** Runs refused before they started, by reason (decision 0440); the workers count the rest. */
  readonly refusals = new Counter({
    name: 'keel_refusals_total',
    help: 'Runs refused for spend or concurrency, by reason (budget_exceeded, quota_exceeded, concurrency)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly streamClients = new Gauge({
    name: 'keel_stream_clients',
    help: 'Event streams (SSE) open right now, by style (keel or langgraph)',
    labelNames: ['style'] as const,
    registers: [this.registry],
  });

  /** With the process's own metrics (CPU, memory, event loop lag) when this registry is served. */
  withProcessMetrics(): this {
    collectDefaultMetrics({ register: this.registry });
    return this;
  }
}
