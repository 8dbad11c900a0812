/** Crons over HTTP, as LangGraph's SDKs call them; each operation is declared once (api/contract.ts). */
import { Router } from 'express';
import { z } from 'zod';
import { operation, route } from '../contract';
import { countCronsBody, createCronBody, searchCronsBody } from './cron-schemas';
import { cronNotFound, sortCrons, type Crons } from './cron-service';
import { pageOf } from '../protocol/pagination';
import { id, threadPath } from '../schemas';
import { ownerOf, pathId } from '../validate';

/** A cron as the API answers it (api/crons/cron-service.ts). */
const cron = z.looseObject({ cron_id: z.string(), schedule: z.string() });

export const createThreadCron = operation({
  method: 'post',
  path: '/threads/{thread_id}/runs/crons',
  summary: 'A cron on a Temporal Schedule: each time it fires, an ordinary run on this thread',
  params: threadPath,
  body: createCronBody,
  responses: { 200: { description: 'The cron', schema: cron } },
  errors: [404, 409, 503],
});
export const createCron = operation({
  method: 'post',
  path: '/runs/crons',
  summary: 'A cron on a Temporal Schedule: each time it fires, a run on a new thread',
  body: createCronBody,
  responses: { 200: { description: 'The cron', schema: cron } },
  errors: [404, 409, 503],
});
export const searchCrons = operation({
  method: 'post',
  path: '/runs/crons/search',
  summary: 'Find crons (assistant_id, thread_id; sort and paging)',
  body: searchCronsBody,
  responses: { 200: { description: 'Crons', schema: z.array(cron) } },
  errors: [503],
});
export const countCrons = operation({
  method: 'post',
  path: '/runs/crons/count',
  summary: 'Count the crons a search would find',
  body: countCronsBody,
  responses: { 200: { description: 'How many', schema: z.number().int() } },
  errors: [503],
});
export const deleteCron = operation({
  method: 'delete',
  path: '/runs/crons/{cron_id}',
  summary: 'Delete a cron (its schedule); runs it started are ordinary runs and stay',
  params: { cron_id: z.string() },
  responses: { 204: { description: 'Deleted' } },
  errors: [503],
});

export const cronOperations = [createThreadCron, createCron, searchCrons, countCrons, deleteCron];

export function cronRoutes(crons: Crons): Router {
  const router = Router();

  route(router, createThreadCron, async (request, response, { body }) => {
    response.json(await crons.create(pathId(request, 'thread_id'), body, ownerOf(response)));
  });

  route(router, createCron, async (_request, response, { body }) => {
    response.json(await crons.create(undefined, body, ownerOf(response)));
  });

  route(router, searchCrons, async (_request, response, { body }) => {
    const found = sortCrons(await crons.search(body, ownerOf(response)), body);
    response.json(pageOf(found, body.offset, body.limit, response));
  });

  route(router, countCrons, async (_request, response, { body: filter }) => {
    response.json((await crons.search(filter, ownerOf(response))).length);
  });

  route(router, deleteCron, async (request, response) => {
    const parsed = id.safeParse(request.params.cron_id);
    if (!parsed.success) throw cronNotFound(String(request.params.cron_id));
    await crons.delete(parsed.data, ownerOf(response));
    response.status(204).end();
  });

  return router;
}
