/**
 * Keel's metrics in the API (Prometheus, through prom-client): requests by route template (never
 * a raw path, so thread ids stay out of labels), their latency, and the streams open right now.
 */
import { KeelRegistry } from './metrics-registry';

const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export class ApiMetrics extends KeelRegistry {
  readonly requests = this.counter(
    'keel_http_requests_total',
    'HTTP requests answered, by method, route template and status code',
    ['method', 'route', 'status'],
  );
  readonly requestDuration = this.histogram(
    'keel_http_request_duration_seconds',
    'HTTP requests, received to answered (event streams left out: they last as long as their client)',
    ['method', 'route'],
    latencyBuckets,
  );
  readonly streamClients = this.gauge(
    'keel_stream_clients',
    'Event streams (SSE) open right now, by style (keel or langgraph)',
    ['style'],
  );
}
