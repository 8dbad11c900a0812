/** Sessions over HTTP: search, export, delete and clean up threads. */
import { Router } from 'express';
import { z } from 'zod';
import { cleanupBody, exportQuery, searchBody } from '../checkpoint-schemas';
import { operation, route } from '../contract';
import type { Conversations } from '../conversations';
import { threadListing, transcriptExport } from '../response-schemas';
import { threadPath } from '../schemas';
import type { Sessions } from '../sessions';
import { transcriptMarkdown } from '../transcript-export';
import { ownerOf, pathId } from '../validate';

export const searchThreads = operation({
  method: 'post',
  path: '/threads/search',
  summary: 'Find threads (every filter optional; they combine with AND)',
  body: searchBody,
  responses: { 200: { description: 'Threads', schema: z.array(threadListing) } },
  errors: [503],
});

export const cleanupThreads = operation({
  method: 'post',
  path: '/threads/cleanup',
  summary: 'Close and delete old threads (dry run by default)',
  body: cleanupBody,
  responses: {
    200: {
      description: 'What was (or would be) deleted',
      schema: z.object({
        dry_run: z.boolean(),
        threads: z.array(threadListing),
        deleted: z.array(z.string()),
        failed: z.array(z.object({ thread_id: z.string(), message: z.string() })),
      }),
    },
  },
  errors: [503],
});

export const exportThread = operation({
  method: 'get',
  path: '/threads/{thread_id}/export',
  summary: 'The transcript as JSON or Markdown (?format=json|markdown)',
  params: threadPath,
  query: exportQuery,
  responses: {
    200: {
      description: 'The export (Markdown with format=markdown)',
      schema: transcriptExport,
      media: ['text/markdown'],
    },
  },
  errors: [503],
});

export const deleteThread = operation({
  method: 'delete',
  path: '/threads/{thread_id}',
  summary: 'Close and delete a thread: final when it answers (GET 404, the id free again)',
  params: threadPath,
  responses: {
    200: {
      description: 'Deleted',
      schema: z.object({ thread_id: z.string(), deleted: z.literal(true) }),
    },
  },
  errors: [503],
});

export const sessionOperations = [searchThreads, cleanupThreads, exportThread, deleteThread];

export function sessionRoutes(conversations: Conversations, sessions: Sessions): Router {
  const router = Router();

  route(router, searchThreads, async (_request, response, { body: { limit, ...filter } }) => {
    response.json(await sessions.search(filter, ownerOf(response), limit));
  });

  /** Closes and deletes matching threads (not busy ones); `dry_run` (the default) only lists them. */
  route(
    router,
    cleanupThreads,
    async (_request, response, { body: { limit, dry_run, status, ...filter } }) => {
      const statuses = status === undefined ? (['idle', 'error', 'closed'] as const) : [status].flat();
      const candidates = await sessions.search(
        { ...filter, status: [...statuses] },
        ownerOf(response),
        limit,
      );
      const deleted: string[] = [];
      const failed: Array<{ thread_id: string; message: string }> = [];
      if (!dry_run) {
        for (const thread of candidates) {
          try {
            await sessions.remove(thread.thread_id);
            deleted.push(thread.thread_id);
          } catch (error) {
            failed.push({
              thread_id: thread.thread_id,
              message: error instanceof Error ? error.message : String(error),
            });
          }
        }
      }
      response.json({ dry_run, threads: candidates, deleted, failed });
    },
  );

  route(router, exportThread, async (request, response, { query: { format } }) => {
    const threadId = pathId(request, 'thread_id');
    const [thread, messages] = await Promise.all([
      conversations.getThread(threadId, ownerOf(response)),
      conversations.transcript(threadId),
    ]);
    const document = { thread, messages, exported_at: new Date().toISOString() };
    if (format === 'json') {
      response.json(document);
      return;
    }
    response.type('text/markdown; charset=utf-8').send(transcriptMarkdown(document));
  });

  /** Final when it answers: GET answers 404, runs are refused, and the id can be used again. */
  route(router, deleteThread, async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    await conversations.authorize(threadId, ownerOf(response));
    await sessions.remove(threadId, { waitUntilGone: true });
    response.json({ thread_id: threadId, deleted: true });
  });

  return router;
}
