/** Sessions over HTTP: search, export, delete and clean up threads. */
import { Router } from 'express';
import { isDeepStrictEqual } from 'node:util';
import { cleanupBody, countBody, exportQuery, searchBody } from '../checkpoint-schemas';
import { toLangChainMessages } from '../protocol/langchain-messages';
import type { Conversations } from '../conversations';
import type { Sessions } from '../sessions';
import { transcriptMarkdown } from '../transcript-export';
import { ownerOf, parseBody, parseQuery, pathId } from '../validate';

export function sessionRoutes(conversations: Conversations, sessions: Sessions): Router {
  const router = Router();

  /**
   * LangGraph's thread search. Without a sort or a values filter, visibility's order (newest
   * first) is kept and only what the page needs is read.
   */
  router.post('/threads/search', async (request, response) => {
    const {
      limit,
      offset,
      sort_by,
      sort_order,
      values,
      select: _select,
      ...filter
    } = parseBody(searchBody, request);
    const everything = sort_by !== undefined || values !== undefined;
    let found = await sessions.search(filter, ownerOf(response), everything ? 10_000 : offset + limit);
    if (sort_by !== undefined) {
      found.sort((a, b) => String(a[sort_by]).localeCompare(String(b[sort_by])));
      if ((sort_order ?? 'desc') === 'desc') found.reverse();
    }
    if (values !== undefined) {
      const kept: typeof found = [];
      for (const thread of found) {
        const messages = toLangChainMessages(await conversations.transcript(thread.thread_id));
        if (
          Object.entries(values).every(([key, value]) =>
            isDeepStrictEqual({ messages }[key as 'messages'], value),
          )
        )
          kept.push(thread);
        if (kept.length >= offset + limit) break;
      }
      found = kept;
    }
    response.json(found.slice(offset, offset + limit));
  });

  router.post('/threads/count', async (request, response) => {
    const filter = parseBody(countBody, request);
    response.json((await sessions.search(filter, ownerOf(response), 10_000)).length);
  });

  /** Closes and deletes matching threads (not busy ones); `dry_run` (the default) only lists them. */
  router.post('/threads/cleanup', async (request, response) => {
    const { limit, dry_run, status, ...filter } = parseBody(cleanupBody, request);
    const statuses = status === undefined ? (['idle', 'error', 'closed'] as const) : [status].flat();
    const candidates = await sessions.search({ ...filter, status: [...statuses] }, ownerOf(response), limit);
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
  });

  router.get('/threads/:thread_id/export', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const { format } = parseQuery(exportQuery, request);
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
  router.delete('/threads/:thread_id', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    await conversations.authorize(threadId, ownerOf(response));
    await sessions.remove(threadId, { waitUntilGone: true });
    response.json({ thread_id: threadId, deleted: true });
  });

  return router;
}
