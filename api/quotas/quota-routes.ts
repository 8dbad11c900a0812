/** `GET /quota`: the caller's own quota and where it stands — spent, held, left (decision 0440). */
import { Router } from 'express';
import { z } from 'zod';
import { operation, route } from '../contract';
import type { OwnerQuotas } from './owner-quotas';
import { scopeFor } from '../threads/thread-ref';
import { ownerOf } from '../validate';

const quotaWindow = z.object({
  window: z.string().describe('2026-11-27 for a day, 2026-11 for a month (UTC)'),
  spent_usd: z.number(),
  reserved_usd: z.number().describe('Shares held by runs under way, settled with what they are billed'),
  limit_usd: z.number().optional(),
  left_usd: z.number().optional().describe('limit − spent − reserved; absent without a limit'),
  resets_at: z.string(),
});

export const getQuota = operation({
  method: 'get',
  path: '/quota',
  summary: "The caller's quota (KEEL_QUOTA_*): spend per day and month, runs under way",
  responses: {
    200: {
      description: 'Where the quota stands; no limits when none is configured',
      schema: z.object({
        day: quotaWindow,
        month: quotaWindow,
        runs: z.object({ active: z.number(), limit: z.number().optional() }),
      }),
    },
  },
  errors: [503],
});

export const quotaOperations = [getQuota];

export function quotaRoutes(quotas: OwnerQuotas): Router {
  const router = Router();
  route(router, getQuota, async (_request, response) => {
    response.json(await quotas.view(scopeFor(ownerOf(response))));
  });
  return router;
}
