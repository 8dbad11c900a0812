/** Assistants over HTTP, as LangGraph's SDK calls them. */
import { Router, type Request } from 'express';
import { z } from 'zod';
import type { Assistants } from '../protocol/assistants';
import { parseBody } from '../validate';

const searchBody = z
  .object({
    graph_id: z.string().max(200).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    limit: z.number().int().min(1).max(1_000).default(10),
    offset: z.number().int().min(0).default(0),
  })
  .default({ limit: 10, offset: 0 });

const assistantIdOf = (request: Request): string => String(request.params.assistant_id);

export function assistantRoutes(assistants: Assistants): Router {
  const router = Router();

  router.post('/assistants/search', (request, response) => {
    const { limit, offset, ...filter } = parseBody(searchBody, request);
    response.json(assistants.search(filter).slice(offset, offset + limit));
  });

  router.get('/assistants/:assistant_id', (request, response) => {
    response.json(assistants.get(assistantIdOf(request)));
  });

  /** The graph Keel runs: the agent calls the model, the tools answer it, until it ends its turn. */
  router.get('/assistants/:assistant_id/graph', (request, response) => {
    assistants.get(assistantIdOf(request));
    response.json({
      nodes: [
        { id: '__start__', type: 'schema', data: '__start__' },
        { id: 'agent', type: 'runnable', data: 'agent' },
        { id: 'tools', type: 'runnable', data: 'tools' },
        { id: '__end__', type: 'schema', data: '__end__' },
      ],
      edges: [
        { source: '__start__', target: 'agent' },
        { source: 'agent', target: 'tools', conditional: true },
        { source: 'agent', target: '__end__', conditional: true },
        { source: 'tools', target: 'agent' },
      ],
    });
  });

  return router;
}
