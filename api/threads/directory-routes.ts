/** The thread directory over HTTP: search, count, export, delete and clean up threads. */
import { Router } from 'express';
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { cleanupBody, countBody, exportQuery, searchBody } from './thread-schemas';
import { operation, route } from '../contract';
import { toLangChainMessages } from '../protocol/langchain-messages';
import { pageOf } from '../protocol/pagination';
import type { ThreadService } from './thread-service';
import { threadListing, transcriptExport } from '../response-schemas';
import { threadPath } from '../schemas';
import type { ThreadDirectory } from './thread-directory';
import { transcriptMarkdown } from './transcript-export';
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

export const countThreads = operation({
  method: 'post',
  path: '/threads/count',
  summary: 'Count the threads a search would find',
  body: countBody,
  responses: { 200: { description: 'How many', schema: z.number().int() } },
  errors: [503],
});

export const threadDirectoryOperations = [
  searchThreads,
  countThreads,
  cleanupThreads,
  exportThread,
  deleteThread,
];

/**
 * Sub-agents' threads show inside their parent's, so a search leaves them out as LangGraph's
 * clients list threads, unless it asks for them by their `keel_child_of` metadata.
 */
const namesSubAgents = (filter: { metadata?: Record<string, unknown> | undefined }): boolean =>
  filter.metadata?.keel_child_of !== undefined;

export function threadDirectoryRoutes(threads: ThreadService, threadDirectory: ThreadDirectory): Router {
  const router = Router();

  /**
   * LangGraph's thread search. Without a sort or a values filter, visibility's order (newest
   * first) is kept and only what the page needs is read.
   */
  route(router, searchThreads, async (_request, response, { body }) => {
    const { limit, offset, sort_by, sort_order, values, select: _select, ...filter } = body;
    const everything = sort_by !== undefined || values !== undefined;
    // One more than the page: whether there is a next one (LangGraph's paging headers).
    let found = await threadDirectory.search(
      { ...filter, sub_agents: namesSubAgents(filter) },
      ownerOf(response),
      everything ? 10_000 : offset + limit + 1,
    );
    if (sort_by !== undefined) {
      // Ties go by id, so pages neither overlap nor skip.
      found.sort(
        (a, b) =>
          String(a.listing[sort_by]).localeCompare(String(b.listing[sort_by])) ||
          a.listing.thread_id.localeCompare(b.listing.thread_id),
      );
      if ((sort_order ?? 'desc') === 'desc') found.reverse();
    }
    if (values !== undefined) {
      const kept: typeof found = [];
      for (const thread of found) {
        const messages = toLangChainMessages(await threads.transcript(thread.thread));
        if (
          Object.entries(values).every(([key, value]) =>
            isDeepStrictEqual({ messages }[key as 'messages'], value),
          )
        )
          kept.push(thread);
        if (kept.length > offset + limit) break;
      }
      found = kept;
    }
    response.json(pageOf(found, offset, limit, response).map(({ listing }) => listing));
  });

  route(router, countThreads, async (_request, response, { body: filter }) => {
    const search = { ...filter, sub_agents: namesSubAgents(filter) };
    response.json((await threadDirectory.search(search, ownerOf(response), 10_000)).length);
  });

  /** Closes and deletes matching threads (not busy ones); `dry_run` (the default) only lists them. */
  route(
    router,
    cleanupThreads,
    async (_request, response, { body: { limit, dry_run, status, ...filter } }) => {
      const statuses = status === undefined ? (['idle', 'error', 'closed'] as const) : [status].flat();
      const candidates = await threadDirectory.search(
        { ...filter, status: [...statuses] },
        ownerOf(response),
        limit,
      );
      const deleted: string[] = [];
      const failed: Array<{ thread_id: string; message: string }> = [];
      if (!dry_run) {
        for (const { thread } of candidates) {
          try {
            await threadDirectory.remove(thread);
            deleted.push(thread.thread_id);
          } catch (error) {
            failed.push({
              thread_id: thread.thread_id,
              message: error instanceof Error ? error.message : String(error),
            });
          }
        }
      }
      response.json({ dry_run, threads: candidates.map(({ listing }) => listing), deleted, failed });
    },
  );

  route(router, exportThread, async (request, response, { query: { format } }) => {
    const owner = ownerOf(response);
    const found = await threads.authorize(pathId(request, 'thread_id'), owner);
    const [thread, messages] = await Promise.all([
      threads.getThread(found, owner),
      threads.transcript(found),
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
    const thread = await threads.authorize(pathId(request, 'thread_id'), ownerOf(response));
    await threadDirectory.remove(thread);
    response.json({ thread_id: thread.thread_id, deleted: true });
  });

  return router;
}
