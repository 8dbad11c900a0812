import { Router } from 'express';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { z } from 'zod';
import { operation, route } from '../contract';

const checksSchema = z.record(z.string(), z.string());

export const healthz = operation({
  method: 'get',
  path: '/healthz',
  summary: 'Liveness: the process answers',
  public: true,
  responses: { 200: { description: 'ok', schema: z.object({ status: z.literal('ok') }) } },
});

export const readyz = operation({
  method: 'get',
  path: '/readyz',
  summary: 'Readiness: Temporal reachable and a worker polling (503 not_ready, with the checks, when not)',
  public: true,
  responses: {
    200: { description: 'ready', schema: z.object({ status: z.literal('ready'), checks: checksSchema }) },
  },
  errors: [503],
});

export const healthOperations = [healthz, readyz];

/** `/healthz`: the process answers. `/readyz`: Temporal answers and a worker polls the task queue. */
export function healthRoutes(client: Client, namespace: string, taskQueue: string): Router {
  const router = Router();
  route(router, healthz, (_request, response) => {
    response.json({ status: 'ok' });
  });
  route(router, readyz, async (_request, response) => {
    const checks: Record<string, string> = {};
    try {
      const described = await client.withDeadline(Date.now() + 3_000, () =>
        client.workflowService.describeTaskQueue({
          namespace,
          taskQueue: { name: taskQueue },
          taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        }),
      );
      checks.temporal = 'ok';
      checks.workers =
        (described.pollers ?? []).length > 0 ? 'ok' : `no worker is polling task queue "${taskQueue}"`;
    } catch (error) {
      checks.temporal = `unreachable: ${error instanceof Error ? error.message : String(error)}`;
      checks.workers = 'unknown';
    }
    const ready = checks.temporal === 'ok' && checks.workers === 'ok';
    if (ready) {
      response.json({ status: 'ready', checks });
      return;
    }
    const message = Object.entries(checks)
      .filter(([, value]) => value !== 'ok')
      .map(([name, value]) => `${name}: ${value}`)
      .join('; ');
    response.status(503).json({
      error: { type: 'service_unavailable_error', code: 'not_ready', message },
      detail: message,
      checks,
    });
  });
  return router;
}
