import { Router } from 'express';
import type { Conversations } from '../conversations';
import { createThreadBody } from '../schemas';
import { ownerOf, parseBody, pathId } from '../validate';

export function threadRoutes(conversations: Conversations): Router {
  const router = Router();

  router.post('/threads', async (request, response) => {
    const body = parseBody(createThreadBody, request);
    const conversation = conversations.newConversation(
      body.thread_id,
      ownerOf(response),
      body.metadata,
      body.config,
    );
    response.json(await conversations.createThread(conversation, body.if_exists));
  });

  router.get('/threads/:thread_id', async (request, response) => {
    response.json(await conversations.getThread(pathId(request, 'thread_id'), ownerOf(response)));
  });

  router.get('/threads/:thread_id/state', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const [thread, messages] = await Promise.all([
      conversations.getThread(threadId, ownerOf(response)),
      conversations.transcript(threadId),
    ]);
    response.json({
      values: { messages },
      next: thread.active_run_id === undefined ? [] : ['agent'],
      tasks: [],
      metadata: thread.metadata,
      created_at: thread.updated_at,
      checkpoint: { thread_id: threadId, checkpoint_ns: '', checkpoint_id: String(thread.messages_count) },
      parent_checkpoint: null,
    });
  });

  /** Operators: the workflow's whole state, as the getState query returns it. */
  router.get('/threads/:thread_id/debug', async (request, response) => {
    response.json(await conversations.debugState(pathId(request, 'thread_id'), ownerOf(response)));
  });

  return router;
}
