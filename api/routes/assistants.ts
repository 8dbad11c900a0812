/** Assistants over HTTP, as LangGraph's SDKs call them. */
import { randomUUID } from 'node:crypto';
import { Router, type Request } from 'express';
import { z } from 'zod';
import type { Sessions } from '../sessions';
import { ApiError } from '../errors';
import {
  assistantSettings,
  countAssistantsBody,
  createAssistantBody,
  deleteAssistantQuery,
  listVersionsBody,
  searchAssistantsBody,
  setLatestBody,
  updateAssistantBody,
} from '../protocol/assistant-schemas';
import { assistantNotFound, sortAssistants, type Assistants } from '../protocol/assistants';
import { agentNode, graphId, toolsNode } from '../protocol/checkpoints';
import { id } from '../schemas';
import { ownerOf, parseBody, parseQuery } from '../validate';

/** An id that cannot name an assistant answers 404, like any other unknown id. */
function assistantIdOf(request: Request): string {
  const parsed = id.safeParse(request.params.assistant_id);
  if (!parsed.success) throw assistantNotFound(String(request.params.assistant_id).slice(0, 100));
  return parsed.data;
}

const messagesSchema = {
  type: 'object',
  properties: { messages: { type: 'array', items: { type: 'object' } } },
  required: ['messages'],
};

export function assistantRoutes(assistants: Assistants, sessions: Sessions): Router {
  const router = Router();

  router.post('/assistants', async (request, response) => {
    const body = parseBody(createAssistantBody, request);
    response.json(await assistants.create(body, ownerOf(response), randomUUID));
  });

  router.post('/assistants/search', async (request, response) => {
    const body = parseBody(searchAssistantsBody, request);
    const found = sortAssistants(await assistants.search(body, ownerOf(response)), body);
    const page = found.slice(body.offset, body.offset + body.limit);
    if (body.offset + body.limit < found.length)
      response.setHeader('X-Pagination-Next', String(body.offset + body.limit));
    response.json(page);
  });

  router.post('/assistants/count', async (request, response) => {
    const filter = parseBody(countAssistantsBody, request);
    response.json((await assistants.search(filter, ownerOf(response))).length);
  });

  router.get('/assistants/:assistant_id', async (request, response) => {
    response.json(await assistants.get(assistantIdOf(request), ownerOf(response)));
  });

  router.patch('/assistants/:assistant_id', async (request, response) => {
    const body = parseBody(updateAssistantBody, request);
    response.json(await assistants.update(assistantIdOf(request), body, ownerOf(response)));
  });

  /** With `delete_threads=true`, the threads that record this assistant are deleted too. */
  router.delete('/assistants/:assistant_id', async (request, response) => {
    const assistantId = assistantIdOf(request);
    const { delete_threads } = parseQuery(deleteAssistantQuery, request);
    const owner = ownerOf(response);
    await assistants.delete(assistantId, owner);
    if (delete_threads) {
      const threads = await sessions.search({ metadata: { assistant_id: assistantId } }, owner, 10_000);
      for (const thread of threads) await sessions.remove(thread.thread_id);
    }
    response.json({});
  });

  router.post('/assistants/:assistant_id/versions', async (request, response) => {
    const { metadata, limit, offset } = parseBody(listVersionsBody, request);
    const versions = await assistants.versions(assistantIdOf(request), ownerOf(response), metadata);
    response.json(versions.slice(offset, offset + limit));
  });

  router.post('/assistants/:assistant_id/latest', async (request, response) => {
    const { version } = parseBody(setLatestBody, request);
    response.json(await assistants.setLatest(assistantIdOf(request), version, ownerOf(response)));
  });

  /** The graph Keel runs: the agent calls the model, the tools answer it, until it ends its turn. */
  router.get('/assistants/:assistant_id/graph', async (request, response) => {
    await assistants.get(assistantIdOf(request), ownerOf(response));
    response.json({
      nodes: [
        { id: '__start__', type: 'schema', data: '__start__' },
        { id: agentNode, type: 'runnable', data: agentNode },
        { id: toolsNode, type: 'runnable', data: toolsNode },
        { id: '__end__', type: 'schema', data: '__end__' },
      ],
      edges: [
        { source: '__start__', target: agentNode },
        { source: agentNode, target: toolsNode, conditional: true },
        { source: agentNode, target: '__end__', conditional: true },
        { source: toolsNode, target: agentNode },
      ],
    });
  });

  /** The graph's schemas: messages in and out, Keel's settings as its config and context. */
  router.get('/assistants/:assistant_id/schemas', async (request, response) => {
    await assistants.get(assistantIdOf(request), ownerOf(response));
    const settings = z.toJSONSchema(assistantSettings, { io: 'input' });
    response.json({
      graph_id: graphId,
      input_schema: messagesSchema,
      output_schema: messagesSchema,
      state_schema: messagesSchema,
      config_schema: {
        type: 'object',
        properties: { configurable: settings },
      },
      context_schema: settings,
    });
  });

  /** Keel's graph has no subgraphs. */
  router.get('/assistants/:assistant_id/subgraphs', async (request, response) => {
    await assistants.get(assistantIdOf(request), ownerOf(response));
    response.json({});
  });

  router.all('/assistants/:assistant_id/subgraphs/:namespace', () => {
    throw new ApiError(404, 'subgraph_not_found', "Keel's graph has no subgraphs");
  });

  return router;
}
