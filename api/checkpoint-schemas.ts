/** Request schemas for approvals, limits and sessions. */
import { z } from 'zod';
import { id } from './schemas';

export const decisionBody = z.object({
  decision: z.enum(['approve', 'deny']),
  reason: z.string().max(2_000).optional(),
});

const maxTokens = z.number().int().positive().nullable();
const maxCostUsd = z.number().positive().nullable();

/** New budgets, at least one: `null` removes a limit, an absent key leaves it as it is. */
export const limitsBody = z.union(
  [
    z.object({ max_tokens: maxTokens, max_cost_usd: maxCostUsd.optional() }),
    z.object({ max_tokens: maxTokens.optional(), max_cost_usd: maxCostUsd }),
  ],
  { error: 'give max_tokens or max_cost_usd (null removes a limit)' },
);

const threadStatus = z.enum(['idle', 'busy', 'interrupted', 'error', 'closed']);

/** Who to find: every filter is optional and they combine with AND. */
export const threadFilter = z.object({
  status: z.union([threadStatus, z.array(threadStatus).min(1)]).optional(),
  owner: z.string().min(1).max(200).optional(),
  /** Threads whose metadata has each of these keys with an equal (JSON) value. */
  metadata: z.record(z.string(), z.unknown()).optional(),
  /** Threads created more than this many days ago. */
  older_than_days: z.number().min(0).max(36_500).optional(),
});

export const searchBody = threadFilter.extend({
  limit: z.number().int().positive().max(1_000).default(100),
});
export type SearchBody = z.infer<typeof searchBody>;

export const cleanupBody = threadFilter.extend({
  older_than_days: z.number().min(0).max(36_500),
  /** List what would be deleted without deleting it. */
  dry_run: z.boolean().default(true),
  limit: z.number().int().positive().max(1_000).default(1_000),
});

export const exportQuery = z.object({ format: z.enum(['json', 'markdown']).default('json') });

export const approvalId = id;
