/** Assistants over HTTP, as LangGraph's SDK calls them. */
import { Router, type Request } from 'express';
import { z } from 'zod';
import { operation, route } from '../contract';
import type { Assistants } from '../protocol/assistants';
import { assistant } from '../response-schemas';

const searchBody = z
  .object({
    graph_id: z.string().max(200).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    limit: z.number().int().min(1).max(1_000).default(10),
    offset: z.number().int().min(0).default(0),
  })
  .default({ limit: 10, offset: 0 });

const assistantIdOf = (request: Request): string => String(request.params.assistant_id);
const assistantPath = { assistant_id: z.string() };

export const searchAssistants = operation({
  method: 'post',
  path: '/assistants/search',
  summary: 'Find assistants ({graph_id, metadata, limit, offset})',
  body: searchBody,
  responses: { 200: { description: 'Assistants', schema: z.array(assistant) } },
});

export const getAssistant = operation({
  method: 'get',
  path: '/assistants/{assistant_id}',
  summary: 'Get an assistant (the default one is agent)',
  params: assistantPath,
  responses: { 200: { description: 'The assistant', schema: assistant } },
});

export const assistantGraph = operation({
  method: 'get',
  path: '/assistants/{assistant_id}/graph',
  summary: "The assistant's graph: agent and tools",
  params: assistantPath,
  responses: {
    200: {
      description: 'Nodes and edges',
      schema: z.object({
        nodes: z.array(z.object({ id: z.string(), type: z.string(), data: z.string() })),
        edges: z.array(
          z.object({ source: z.string(), target: z.string(), conditional: z.boolean().optional() }),
        ),
      }),
    },
  },
});

export const assistantOperations = [searchAssistants, getAssistant, assistantGraph];

export function assistantRoutes(assistants: Assistants): Router {
  const router = Router();

  route(router, searchAssistants, (_request, response, { body: { limit, offset, ...filter } }) => {
    response.json(assistants.search(filter).slice(offset, offset + limit));
  });

  route(router, getAssistant, (request, response) => {
    response.json(assistants.get(assistantIdOf(request)));
  });

  /** The graph Keel runs: the agent calls the model, the tools answer it, until it ends its turn. */
  route(router, assistantGraph, (request, response) => {
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
