/**
 * `GET /runs?status=queued,running,deferred`: unfinished runs across threads. Temporal visibility
 * (the `KeelRunStatuses` search attribute) finds the threads; each thread's own query gives the
 * runs, so a visibility index that lags behind never shows a run in a status it has left.
 */
import type { Client } from '@temporalio/client';
import { Router } from 'express';
import { z } from 'zod';
import * as messages from '../../common/messages';
import type { Run } from '../../common/run';
import { searchAttributes } from '../../common/search-attributes';
import { scopeOf } from '../../common/thread';
import { operation, route } from '../contract';
import { listingClient } from '../gateway/listing-client';
import { run as runSchema } from '../response-schemas';
import { queryNumber } from '../schemas';
import { ownerOf } from '../validate';

const activeStatuses = ['queued', 'running', 'deferred'] as const;

const oneStatus = `\\s*(?:${activeStatuses.join('|')})\\s*`;

const activeRunsQuery = z.object({
  status: z
    .string()
    .regex(
      new RegExp(`^${oneStatus}(?:,${oneStatus})*$`),
      'status lists only queued, running or deferred, comma-separated',
    )
    .default(activeStatuses.join(','))
    .describe('queued, running and deferred, comma-separated')
    .transform((value) => value.split(',').map((status) => status.trim() as (typeof activeStatuses)[number])),
  limit: queryNumber(z.number().int().positive().max(1_000).default(100)),
});

export const listActiveRuns = operation({
  method: 'get',
  path: '/runs',
  summary: 'Unfinished runs across threads (status: queued, running, deferred; comma-separated)',
  query: activeRunsQuery,
  responses: { 200: { description: 'Runs, newest first', schema: z.array(runSchema) } },
  errors: [503],
});

export const activeRunOperations = [listActiveRuns];

/** A visibility-query string literal: the values are our own enums and ids, quoted defensively. */
const quote = (value: string): string => `'${value.replaceAll("'", "''")}'`;

export function activeRunRoutes(client: Client, taskQueue: string): Router {
  const router = Router();
  // A thread whose key was removed is passed over, not a failed list (api/listing-client.ts).
  const lister = listingClient(client);
  route(router, listActiveRuns, async (_request, response, { query: { status, limit } }) => {
    const owner = ownerOf(response);
    const query = [
      `${searchAttributes.runStatuses.name} IN (${status.map(quote).join(', ')})`,
      `ExecutionStatus = 'Running'`,
      `TaskQueue = ${quote(taskQueue)}`,
      ...(owner === undefined ? [] : [`${searchAttributes.owner.name} = ${quote(owner)}`]),
    ].join(' AND ');
    const wanted = new Set<string>(status);
    const runs: Run[] = [];
    for await (const workflow of lister.workflow.list({ query, pageSize: 100 })) {
      // Without tokens, a thread made under a token is not one the caller can open, so it is not
      // listed: an owner's threads stay unseen by others (decision 0160).
      if (owner === undefined && scopeOf(workflow.workflowId) !== undefined) continue;
      const threadRuns = await client.workflow
        .getHandle(workflow.workflowId)
        .query(messages.listRunsQuery, { limit: 1_000 })
        .catch(() => [] as Run[]);
      runs.push(...threadRuns.filter((run) => wanted.has(run.status)));
      if (runs.length >= limit * 2) break;
    }
    runs.sort((a, b) => b.created_at.localeCompare(a.created_at));
    response.json(runs.slice(0, limit));
  });
  return router;
}
