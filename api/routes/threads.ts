import { Router } from 'express';
import type { Conversations } from '../conversations';
import { graphId, toolsNode } from '../protocol/checkpoints';
import { toInterrupt } from '../protocol/interrupts';
import { patchThreadBody } from '../checkpoint-schemas';
import { createThreadBody } from '../schemas';
import { ownerOf, parseBody, pathId } from '../validate';

export function threadRoutes(conversations: Conversations): Router {
  const router = Router();

  router.post('/threads', async (request, response) => {
    const body = parseBody(createThreadBody, request);
    // Keel serves one graph: every thread records it, as LangGraph records `graph_id`.
    const conversation = conversations.newConversation(
      body.thread_id,
      ownerOf(response),
      { graph_id: graphId, ...body.metadata },
      body.config,
    );
    response.json(await conversations.createThread(conversation, body.if_exists));
  });

  /** The thread, with LangGraph's `interrupts` (by task) while approvals wait. */
  router.get('/threads/:thread_id', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const thread = await conversations.getThread(threadId, ownerOf(response));
    const pending = thread.status === 'interrupted' ? await conversations.pendingApprovals(threadId) : [];
    const byTask = pending.length === 0 ? {} : { [`${toolsNode}:${threadId}`]: pending.map(toInterrupt) };
    response.json({ ...thread, interrupts: byTask });
  });

  router.patch('/threads/:thread_id', async (request, response) => {
    const { metadata } = parseBody(patchThreadBody, request);
    response.json(
      await conversations.patchMetadata(pathId(request, 'thread_id'), ownerOf(response), metadata),
    );
  });

  router.post('/threads/:thread_id/copy', async (request, response) => {
    response.json(await conversations.copyThread(pathId(request, 'thread_id'), ownerOf(response)));
  });

  /** Operators: the workflow's whole state, as the getState query returns it. */
  router.get('/threads/:thread_id/debug', async (request, response) => {
    response.json(await conversations.debugState(pathId(request, 'thread_id'), ownerOf(response)));
  });

  return router;
}
