/** Crons over HTTP, as LangGraph's SDKs call them. */
import { Router } from 'express';
import { countCronsBody, createCronBody, searchCronsBody } from '../protocol/cron-schemas';
import { cronNotFound, sortCrons, type Crons } from '../protocol/crons';
import { id } from '../schemas';
import { ownerOf, parseBody, pathId } from '../validate';

export function cronRoutes(crons: Crons): Router {
  const router = Router();

  router.post('/threads/:thread_id/runs/crons', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const body = parseBody(createCronBody, request);
    response.json(await crons.create(threadId, body, ownerOf(response)));
  });

  router.post('/runs/crons', async (request, response) => {
    const body = parseBody(createCronBody, request);
    response.json(await crons.create(undefined, body, ownerOf(response)));
  });

  router.post('/runs/crons/search', async (request, response) => {
    const body = parseBody(searchCronsBody, request);
    const found = sortCrons(await crons.search(body, ownerOf(response)), body);
    response.json(found.slice(body.offset, body.offset + body.limit));
  });

  router.post('/runs/crons/count', async (request, response) => {
    const filter = parseBody(countCronsBody, request);
    response.json((await crons.search(filter, ownerOf(response))).length);
  });

  router.delete('/runs/crons/:cron_id', async (request, response) => {
    const parsed = id.safeParse(request.params.cron_id);
    if (!parsed.success) throw cronNotFound(String(request.params.cron_id));
    await crons.delete(parsed.data, ownerOf(response));
    response.status(204).end();
  });

  return router;
}
