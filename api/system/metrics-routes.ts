import { Router } from 'express';
import { operation, route } from '../contract';
import type { ApiMetrics } from '../../telemetry/api-metrics';

export const metricsOperation = operation({
  method: 'get',
  path: '/metrics',
  summary:
    "The API's metrics in Prometheus's text format (the worker serves its own: KEEL_WORKER_METRICS_PORT)",
  responses: { 200: { description: 'Prometheus text exposition format 0.0.4', media: ['text/plain'] } },
  tags: ['metrics'],
});

export const metricsOperations = [metricsOperation];

export function metricsRoutes(metrics: ApiMetrics): Router {
  const router = Router();
  route(router, metricsOperation, async (_request, response) => {
    const text = await metrics.registry.metrics();
    response.setHeader('Content-Type', metrics.registry.contentType);
    response.setHeader('Cache-Control', 'no-store');
    response.send(text);
  });
  return router;
}
