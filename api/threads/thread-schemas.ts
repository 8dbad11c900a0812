/**
 * Request schemas for what is asked of threads beyond runs: approvals, limits, metadata, and the
 * thread directory's search, count, clean-up and export.
 */
import { z } from 'zod';
import { id } from '../schemas';

/** A decision: approve (optionally with edited arguments) or deny (with a reason). */
export const decisionBody = z.union([
  z.object({
    decision: z.literal('approve'),
    reason: z.string().max(2_000).optional(),
    /** Run the tool with these arguments instead of the model's. */
    input: z.record(z.string(), z.unknown()).optional(),
  }),
  z.strictObject({ decision: z.literal('deny'), reason: z.string().max(2_000).optional() }),
]);

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
  // A NUL cannot be said in a visibility query: no owner holds one (token owners come from
  // configuration), so a filter for one is invalid rather than a failed query.
  owner: z
    .string()
    .min(1)
    .max(200)
    .refine((value) => !value.includes('\u0000'), 'must not hold a NUL character')
    .meta({ pattern: '^[^\\u0000]*$' })
    .optional(),
  /** Threads whose metadata has each of these keys with an equal (JSON) value. */
  metadata: z.record(z.string(), z.unknown()).optional(),
  /** Threads created more than this many days ago. */
  older_than_days: z.number().min(0).max(36_500).optional(),
});

export const searchBody = threadFilter.extend({
  /** Only these threads. */
  ids: z.array(id).min(1).max(1_000).optional(),
  /** Threads whose values (`messages`) equal these. */
  values: z.record(z.string(), z.unknown()).optional(),
  limit: z.number().int().positive().max(1_000).default(100),
  offset: z.number().int().min(0).max(10_000).default(0),
  /** Visibility keeps no time of a thread's last change, so `updated_at` cannot be sorted on. */
  sort_by: z.enum(['thread_id', 'status', 'created_at']).optional(),
  sort_order: z.enum(['asc', 'desc']).optional(),
  select: z.array(z.string()).optional(),
});
export type SearchBody = z.infer<typeof searchBody>;

export const countBody = threadFilter.extend({ ids: z.array(id).min(1).max(1_000).optional() }).default({});

export const cleanupBody = threadFilter.extend({
  older_than_days: z.number().min(0).max(36_500),
  /** List what would be deleted without deleting it. */
  dry_run: z.boolean().default(true),
  limit: z.number().int().positive().max(1_000).default(1_000),
});

export const exportQuery = z.object({ format: z.enum(['json', 'markdown']).default('json') });

export const approvalId = id;

export const patchThreadBody = z.object({
  metadata: z
    .record(z.string(), z.unknown())
    .refine((value) => JSON.stringify(value).length <= 16_384, 'metadata must be at most 16 KiB of JSON'),
});
