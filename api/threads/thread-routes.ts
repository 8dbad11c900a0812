import { Router } from 'express';
import { z } from 'zod';
import { operation, route } from '../contract';
import type { ThreadService } from './thread-service';
import { patchThreadBody } from './thread-schemas';
import { graphId, toolsNode } from '../protocol/graph';
import { toInterrupt } from '../protocol/interrupts';
import { thread } from '../response-schemas';
import { createThreadBody, threadPath } from '../schemas';
import { ownerOf, pathId } from '../validate';

export const createThread = operation({
  method: 'post',
  path: '/threads',
  summary:
    'Create a thread (every field optional: an empty body makes a thread with a new id). With API tokens ids are per owner: another owner’s thread of the same id is neither seen nor in the way; 409 thread_exists means your own',
  body: createThreadBody,
  responses: { 200: { description: 'The thread', schema: thread } },
  errors: [409, 503],
});

/** A thread as LangGraph answers it: with its pending interrupts by task. */
const threadWithInterrupts = thread.extend({ interrupts: z.record(z.string(), z.array(z.unknown())) });

export const getThread = operation({
  method: 'get',
  path: '/threads/{thread_id}',
  summary: "Get a thread, with LangGraph's interrupts (by task) while approvals wait",
  params: threadPath,
  responses: { 200: { description: 'The thread', schema: threadWithInterrupts } },
  errors: [503],
});

export const patchThread = operation({
  method: 'patch',
  path: '/threads/{thread_id}',
  summary: "Merge keys into a thread's metadata",
  params: threadPath,
  body: patchThreadBody,
  responses: { 200: { description: 'The thread', schema: thread } },
  errors: [409, 503],
});

export const copyThread = operation({
  method: 'post',
  path: '/threads/{thread_id}/copy',
  summary: 'A new thread with a copy of this one’s state',
  params: threadPath,
  responses: { 200: { description: 'The new thread', schema: thread } },
  errors: [409, 503],
});

export const debugThread = operation({
  method: 'get',
  path: '/threads/{thread_id}/debug',
  summary: "Operators: the workflow's whole state (getState query; not a stable schema)",
  params: threadPath,
  responses: {
    200: {
      description: 'The state dump',
      schema: z.looseObject({
        state: z.record(z.string(), z.unknown()),
        in_flight_activities: z.number(),
        draining: z.boolean(),
        workflow_run_id: z.string(),
        history_length: z.number(),
        history_size: z.number(),
        continue_as_new_suggested: z.boolean(),
      }),
    },
  },
  errors: [503],
});

export const threadOperations = [createThread, getThread, patchThread, copyThread, debugThread];

export function threadRoutes(threads: ThreadService): Router {
  const router = Router();

  route(router, createThread, async (_request, response, { body }) => {
    // Keel serves one graph: every thread records it, as LangGraph records `graph_id`.
    const conversation = threads.newConversation(
      body.thread_id,
      ownerOf(response),
      { graph_id: graphId, ...body.metadata },
      body.config,
    );
    response.json(await threads.createThread(conversation, body.if_exists));
  });

  /** The thread, with LangGraph's `interrupts` (by task) while approvals wait. */
  route(router, getThread, async (request, response) => {
    const owner = ownerOf(response);
    const thread = await threads.authorize(pathId(request, 'thread_id'), owner);
    const found = await threads.getThread(thread, owner);
    const pending = found.status === 'interrupted' ? await threads.pendingApprovals(thread) : [];
    const byTask =
      pending.length === 0 ? {} : { [`${toolsNode}:${thread.thread_id}`]: pending.map(toInterrupt) };
    response.json({ ...found, interrupts: byTask });
  });

  route(router, patchThread, async (request, response, { body: { metadata } }) => {
    response.json(await threads.patchMetadata(pathId(request, 'thread_id'), ownerOf(response), metadata));
  });

  route(router, copyThread, async (request, response) => {
    response.json(await threads.copyThread(pathId(request, 'thread_id'), ownerOf(response)));
  });

  /** Operators: the workflow's whole state, as the getState query returns it. */
  route(router, debugThread, async (request, response) => {
    response.json(await threads.debugState(pathId(request, 'thread_id'), ownerOf(response)));
  });

  return router;
}
