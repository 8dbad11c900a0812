/**
 * `GET /runs?status=queued,running,deferred`: unfinished runs across threads. Temporal visibility
 * (the `KeelRunStatuses` search attribute) finds the threads; each thread's own query gives the
 * runs, so a visibility index that lags behind never shows a run in a status it has left.
 */
import { Router } from 'express';
import { z } from 'zod';
import * as messages from '../../common/messages';
import type { Run } from '../../common/run';
import { searchAttributes } from '../../common/search-attributes';
import type { Conversations } from '../conversations';
import { listingClient } from '../listing-client';
import { ownerOf, parseQuery } from '../validate';

const activeStatuses = ['queued', 'running', 'deferred'] as const;

const activeRunsQuery = z.object({
  status: z
    .string()
    .default(activeStatuses.join(','))
    .transform((value) => value.split(',').map((status) => status.trim()))
    .pipe(
      z.array(z.enum(activeStatuses, { message: 'status lists only queued, running or deferred' })).min(1),
    ),
  limit: z.coerce.number().int().positive().max(1_000).default(100),
});

/** A visibility-query string literal: the values are our own enums and ids, quoted defensively. */
const quote = (value: string): string => `'${value.replaceAll("'", "''")}'`;

export function activeRunRoutes(conversations: Conversations, taskQueue: string): Router {
  const router = Router();
  // A thread whose key was removed is passed over, not a failed list (api/listing-client.ts).
  const lister = listingClient(conversations.client);
  router.get('/runs', async (request, response) => {
    const { status, limit } = parseQuery(activeRunsQuery, request);
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
      const threadRuns = await conversations.client.workflow
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
