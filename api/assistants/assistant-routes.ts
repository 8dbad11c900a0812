/** Assistants over HTTP, as LangGraph's SDKs call them; each operation is declared once (api/contract.ts). */
import type { HostEntry } from '../../platform/network-hosts';
import { grantNetworkHosts } from '../threads/thread-config';
import { randomUUID } from 'node:crypto';
import { Router, type Request } from 'express';
import { z } from 'zod';
import { operation, route } from '../contract';
import type { ThreadDirectory } from '../threads/thread-directory';
import {
  assistantSettings,
  countAssistantsBody,
  createAssistantBody,
  deleteAssistantQuery,
  listVersionsBody,
  searchAssistantsBody,
  setLatestBody,
  updateAssistantBody,
} from './assistant-schemas';
import { assistantNotFound, sortAssistants, type Assistants } from './assistant-service';
import { pageOf } from '../protocol/pagination';
import { agentNode, graphId, toolsNode } from '../protocol/graph';
import { assistant } from '../response-schemas';
import { id } from '../schemas';
import { ownerOf } from '../validate';

const assistantPath = { assistant_id: z.string() };
const graphSchema = z.object({
  nodes: z.array(z.object({ id: z.string(), type: z.string(), data: z.string() })),
  edges: z.array(z.object({ source: z.string(), target: z.string(), conditional: z.boolean().optional() })),
});
const jsonObject = z.record(z.string(), z.unknown());

export const createAssistant = operation({
  method: 'post',
  path: '/assistants',
  summary: 'Create an assistant: a named, versioned configuration of the agent',
  body: createAssistantBody,
  responses: { 200: { description: 'The assistant', schema: assistant } },
  errors: [409],
});
export const searchAssistants = operation({
  method: 'post',
  path: '/assistants/search',
  summary: 'Find assistants (graph_id, metadata, name; sort and paging)',
  body: searchAssistantsBody,
  responses: { 200: { description: 'Assistants', schema: z.array(assistant) } },
});
export const countAssistants = operation({
  method: 'post',
  path: '/assistants/count',
  summary: 'Count the assistants a search would find',
  body: countAssistantsBody,
  responses: { 200: { description: 'How many', schema: z.number().int() } },
});
export const getAssistant = operation({
  method: 'get',
  path: '/assistants/{assistant_id}',
  summary: 'Get an assistant (the default one is agent)',
  params: assistantPath,
  responses: { 200: { description: 'The assistant', schema: assistant } },
});
export const updateAssistant = operation({
  method: 'patch',
  path: '/assistants/{assistant_id}',
  summary: 'Change an assistant: a new version, which becomes the latest',
  params: assistantPath,
  body: updateAssistantBody,
  responses: { 200: { description: 'The assistant', schema: assistant } },
  errors: [409],
});
export const deleteAssistant = operation({
  method: 'delete',
  path: '/assistants/{assistant_id}',
  summary: 'Delete an assistant (delete_threads=true deletes the threads that record it)',
  params: assistantPath,
  query: deleteAssistantQuery,
  responses: { 200: { description: 'Deleted', schema: jsonObject } },
  errors: [409],
});
export const listAssistantVersions = operation({
  method: 'post',
  path: '/assistants/{assistant_id}/versions',
  summary: "An assistant's versions, newest first",
  params: assistantPath,
  body: listVersionsBody,
  responses: { 200: { description: 'Versions', schema: z.array(assistant.omit({ updated_at: true })) } },
});
export const setLatestAssistantVersion = operation({
  method: 'post',
  path: '/assistants/{assistant_id}/latest',
  summary: 'Make an earlier version the latest',
  params: assistantPath,
  body: setLatestBody,
  responses: { 200: { description: 'The assistant', schema: assistant } },
});
export const assistantGraph = operation({
  method: 'get',
  path: '/assistants/{assistant_id}/graph',
  summary: "The assistant's graph: agent and tools",
  params: assistantPath,
  responses: { 200: { description: 'Nodes and edges', schema: graphSchema } },
});
export const assistantSchemas = operation({
  method: 'get',
  path: '/assistants/{assistant_id}/schemas',
  summary: "The graph's schemas: messages in and out, Keel's settings as config and context",
  params: assistantPath,
  responses: { 200: { description: 'JSON Schemas', schema: jsonObject } },
});
export const assistantSubgraphs = operation({
  method: 'get',
  path: '/assistants/{assistant_id}/subgraphs',
  summary: "The graph's subgraphs (Keel's has none)",
  params: assistantPath,
  responses: { 200: { description: 'None', schema: jsonObject } },
});

export const assistantOperations = [
  createAssistant,
  searchAssistants,
  countAssistants,
  getAssistant,
  updateAssistant,
  deleteAssistant,
  listAssistantVersions,
  setLatestAssistantVersion,
  assistantGraph,
  assistantSchemas,
  assistantSubgraphs,
];

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

export function assistantRoutes(
  assistants: Assistants,
  threadDirectory: ThreadDirectory,
  networkHosts: readonly HostEntry[],
): Router {
  const router = Router();
  /** An assistant asks for no more network than a thread may (422 `network_host_not_allowed`). */
  const checkHosts = (body: {
    config?: { configurable?: { network_hosts?: string[] | undefined } | undefined } | undefined;
    context?: { network_hosts?: string[] | undefined } | undefined;
  }) => {
    for (const hosts of [body.config?.configurable?.network_hosts, body.context?.network_hosts])
      if (hosts !== undefined) grantNetworkHosts(hosts, networkHosts);
  };

  route(router, createAssistant, async (_request, response, { body }) => {
    checkHosts(body);
    response.json(await assistants.create(body, ownerOf(response), randomUUID));
  });

  route(router, searchAssistants, async (_request, response, { body }) => {
    const found = sortAssistants(await assistants.search(body, ownerOf(response)), body);
    response.json(pageOf(found, body.offset, body.limit, response));
  });

  route(router, countAssistants, async (_request, response, { body: filter }) => {
    response.json((await assistants.search(filter, ownerOf(response))).length);
  });

  route(router, getAssistant, async (request, response) => {
    response.json(await assistants.get(assistantIdOf(request), ownerOf(response)));
  });

  route(router, updateAssistant, async (request, response, { body }) => {
    checkHosts(body);
    response.json(await assistants.update(assistantIdOf(request), body, ownerOf(response)));
  });

  /** With `delete_threads=true`, the threads that record this assistant are deleted too. */
  route(router, deleteAssistant, async (request, response, { query: { delete_threads } }) => {
    const assistantId = assistantIdOf(request);
    const owner = ownerOf(response);
    await assistants.delete(assistantId, owner);
    if (delete_threads) {
      const threads = await threadDirectory.search(
        { metadata: { assistant_id: assistantId } },
        owner,
        10_000,
      );
      for (const { thread } of threads) await threadDirectory.remove(thread);
    }
    response.json({});
  });

  route(router, listAssistantVersions, async (request, response, { body: { metadata, limit, offset } }) => {
    const versions = await assistants.versions(assistantIdOf(request), ownerOf(response), metadata);
    response.json(versions.slice(offset, offset + limit));
  });

  route(router, setLatestAssistantVersion, async (request, response, { body: { version } }) => {
    response.json(await assistants.setLatest(assistantIdOf(request), version, ownerOf(response)));
  });

  /** The graph Keel runs: the agent calls the model, the tools answer it, until it ends its turn. */
  route(router, assistantGraph, async (request, response) => {
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
  route(router, assistantSchemas, async (request, response) => {
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
  route(router, assistantSubgraphs, async (request, response) => {
    await assistants.get(assistantIdOf(request), ownerOf(response));
    response.json({});
  });

  return router;
}
