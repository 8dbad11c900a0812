/**
 * A thread's state and history as LangGraph's clients read them: LangChain messages in
 * `values`, one checkpoint per committed step (api/protocol/checkpoints.ts).
 */
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import type { Conversations } from '../conversations';
import { ApiError } from '../errors';
import { threadCheckpoints, withInterrupts, type ThreadState } from '../protocol/checkpoints';
import { toInterrupt } from '../protocol/interrupts';
import { ownerOf, parseBody, parseQuery, pathId } from '../validate';

/** A checkpoint as clients name one: its id, or a config/checkpoint object that holds it. */
const checkpointRef = z
  .union([
    z.string(),
    z.object({ configurable: z.object({ checkpoint_id: z.string() }) }),
    z.object({ checkpoint_id: z.string() }),
  ])
  .optional()
  .transform((value) =>
    typeof value === 'string'
      ? value
      : value === undefined
        ? undefined
        : 'configurable' in value
          ? value.configurable.checkpoint_id
          : value.checkpoint_id,
  );

const checkpointBody = z.object({ checkpoint: checkpointRef });

const historyFilter = z.object({
  limit: z.coerce.number().int().min(1).max(1_000).default(10),
  before: checkpointRef,
  metadata: z.record(z.string(), z.unknown()).optional(),
});

export function threadStateRoutes(conversations: Conversations): Router {
  const router = Router();

  /** Every checkpoint, newest first. */
  const checkpointsOf = async (request: Request, response: Response): Promise<ThreadState[]> => {
    const threadId = pathId(request, 'thread_id');
    const [thread, messages] = await Promise.all([
      conversations.getThread(threadId, ownerOf(response)),
      conversations.transcript(threadId),
    ]);
    const busy = thread.active_run_id !== undefined || thread.queued_run_ids.length > 0;
    const states = threadCheckpoints(threadId, messages, { created_at: thread.created_at, busy }).reverse();
    if (thread.status !== 'interrupted' || states[0] === undefined) return states;
    const interrupts = (await conversations.pendingApprovals(threadId)).map(toInterrupt);
    return [withInterrupts(states[0], interrupts), ...states.slice(1)];
  };

  router.get('/threads/:thread_id/state', async (request, response) => {
    const [latest] = await checkpointsOf(request, response);
    response.json(latest);
  });

  /** One checkpoint's state, or 404 `checkpoint_not_found`. */
  const stateAt = async (request: Request, response: Response, checkpointId: string | undefined) => {
    const states = await checkpointsOf(request, response);
    const found = states.find((state) => state.checkpoint.checkpoint_id === checkpointId);
    if (found === undefined)
      throw new ApiError(404, 'checkpoint_not_found', `checkpoint ${String(checkpointId)} not found`);
    response.json(found);
  };

  router.post('/threads/:thread_id/state/checkpoint', async (request, response) => {
    await stateAt(request, response, parseBody(checkpointBody, request).checkpoint);
  });

  router.get('/threads/:thread_id/state/:checkpoint_id', async (request, response) => {
    await stateAt(request, response, String(request.params.checkpoint_id));
  });

  const history = async (request: Request, response: Response, filter: z.infer<typeof historyFilter>) => {
    let states = await checkpointsOf(request, response);
    if (filter.before !== undefined) {
      const at = states.findIndex((state) => state.checkpoint.checkpoint_id === filter.before);
      states = at === -1 ? [] : states.slice(at + 1);
    }
    const wanted = Object.entries(filter.metadata ?? {});
    states = states.filter((state) =>
      wanted.every(
        ([key, value]) =>
          JSON.stringify((state.metadata as Record<string, unknown>)[key]) === JSON.stringify(value),
      ),
    );
    response.json(states.slice(0, filter.limit));
  };

  /**
   * Writing state. Keel's state is its transcript, written only by runs under the transcript
   * invariant; a state written from outside would bypass it (docs/decisions/0093-thread-management.md).
   * So both are refused, after the thread is found, never taken and ignored.
   */
  const stateNotWritable = async (request: Request, response: Response) => {
    await conversations.authorize(pathId(request, 'thread_id'), ownerOf(response));
    throw new ApiError(
      422,
      'state_not_writable',
      "Keel's thread state is written by runs only: send the message as a run's input, or change the thread's metadata with PATCH /threads/:thread_id",
    );
  };
  router.post('/threads/:thread_id/state', stateNotWritable);
  router.patch('/threads/:thread_id/state', stateNotWritable);

  router.get('/threads/:thread_id/history', async (request, response) => {
    await history(request, response, parseQuery(historyFilter, request));
  });

  router.post('/threads/:thread_id/history', async (request, response) => {
    await history(request, response, parseBody(historyFilter, request));
  });

  return router;
}
