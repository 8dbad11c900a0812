import { Router } from 'express';
import type { Conversations } from '../conversations';
import { graphId } from '../protocol/checkpoints';
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

  router.get('/threads/:thread_id', async (request, response) => {
    response.json(await conversations.getThread(pathId(request, 'thread_id'), ownerOf(response)));
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
