/**
 * A thread's state and history as LangGraph's clients read them: LangChain messages in
 * `values`, one checkpoint per committed step (api/protocol/checkpoints.ts).
 */
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { operation, route } from '../contract';
import type { ThreadService } from './thread-service';
import { ApiError } from '../errors';
import { branchPaths } from '../../common/branch-tree';
import {
  branchCheckpoints,
  newestFirst,
  threadCheckpoints,
  withInterrupts,
  type ThreadState,
} from '../protocol/checkpoints';
import { toInterrupt } from '../protocol/interrupts';
import { threadState } from '../response-schemas';
import { queryNumber, threadPath } from '../schemas';
import { ownerOf, pathId } from '../validate';

/**
 * A checkpoint as clients name one: its id, or a config/checkpoint object that holds it. An
 * object without an id names none, as in LangGraph, whose config without one is the latest.
 */
const checkpointRef = z
  .union([
    z.string(),
    z.object({ configurable: z.object({ checkpoint_id: z.string().optional() }) }),
    z.object({ checkpoint_id: z.string().optional() }),
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
  limit: z.number().int().min(1).max(1_000).default(10),
  before: checkpointRef,
  metadata: z.record(z.string(), z.unknown()).optional(),
});

const historyQuery = z.object({
  limit: queryNumber(z.number().int().min(1).max(1_000).default(10)),
  before: z.string().optional(),
});

const stateAnswer = { description: 'The state', schema: threadState };
const statesAnswer = { description: 'Thread states, newest first', schema: z.array(threadState) };

export const getState = operation({
  method: 'get',
  path: '/threads/{thread_id}/state',
  summary: 'Get the thread state: its newest checkpoint, LangChain messages in values',
  params: threadPath,
  responses: { 200: stateAnswer },
  errors: [503],
});

export const stateAtCheckpoint = operation({
  method: 'post',
  path: '/threads/{thread_id}/state/checkpoint',
  summary:
    "The state at a checkpoint ({checkpoint: {checkpoint_id}}), or the latest when it names none, as LangGraph's; 404 checkpoint_not_found",
  params: threadPath,
  body: checkpointBody,
  responses: { 200: stateAnswer },
  errors: [503],
});

export const getStateAt = operation({
  method: 'get',
  path: '/threads/{thread_id}/state/{checkpoint_id}',
  summary: 'The state at a checkpoint; 404 checkpoint_not_found',
  params: { ...threadPath, checkpoint_id: z.string() },
  responses: { 200: stateAnswer },
  errors: [503],
});

export const getHistory = operation({
  method: 'get',
  path: '/threads/{thread_id}/history',
  summary: 'Checkpoints, newest first: one per committed step (?limit, ?before=<checkpoint_id>)',
  params: threadPath,
  query: historyQuery,
  responses: { 200: statesAnswer },
  errors: [503],
});

export const searchHistory = operation({
  method: 'post',
  path: '/threads/{thread_id}/history',
  summary: 'Checkpoints, newest first ({limit, before, metadata})',
  params: threadPath,
  body: historyFilter,
  responses: { 200: statesAnswer },
  errors: [503],
});

/**
 * Refused, always, with 403 `state_not_writable` (docs/decisions/0380): the document gives that
 * as the one answer, so a valid request answered so is what the contract says.
 */
const stateWrite = (method: 'post' | 'patch') =>
  operation({
    method,
    path: '/threads/{thread_id}/state',
    summary:
      "Write a thread's state: always refused (403 state_not_writable), runs alone write it; send the message as a run's input",
    params: threadPath,
    body: z.record(z.string(), z.unknown()),
    responses: {},
    errors: [403, 503],
  });
export const updateState = stateWrite('post');
export const patchState = stateWrite('patch');

export const threadStateOperations = [
  getState,
  updateState,
  patchState,
  stateAtCheckpoint,
  getStateAt,
  getHistory,
  searchHistory,
];

export function threadStateRoutes(threads: ThreadService): Router {
  const router = Router();

  /** Every checkpoint, on the current branch and the earlier ones forks cut off, newest first. */
  const checkpointsOf = async (request: Request, response: Response): Promise<ThreadState[]> => {
    const owner = ownerOf(response);
    const found = await threads.authorize(pathId(request, 'thread_id'), owner);
    const threadId = found.thread_id;
    const [thread, messages, tree] = await Promise.all([
      threads.getThread(found, owner),
      threads.transcript(found),
      threads.branches(found),
    ]);
    const busy = thread.active_run_id !== undefined || thread.queued_run_ids.length > 0;
    const compacted = tree.compacted_messages > 0;
    const current = threadCheckpoints(threadId, messages, { created_at: thread.created_at, busy }, compacted);
    const earlier = branchCheckpoints(
      threadId,
      branchPaths(messages, tree.branches, tree.compacted_messages),
    );
    // The current branch's newest state comes first: it holds the newest message.
    const states = newestFirst([...current, ...earlier]);
    if (thread.status !== 'interrupted' || states[0] === undefined) return states;
    const interrupts = (await threads.pendingApprovals(found)).map(toInterrupt);
    return [withInterrupts(states[0], interrupts), ...states.slice(1)];
  };

  route(router, getState, async (request, response) => {
    const [latest] = await checkpointsOf(request, response);
    response.json(latest);
  });

  /** One checkpoint's state (the latest when none is named), or 404 `checkpoint_not_found`. */
  const stateAt = async (request: Request, response: Response, checkpointId: string | undefined) => {
    const states = await checkpointsOf(request, response);
    const found =
      checkpointId === undefined
        ? states[0]
        : states.find((state) => state.checkpoint.checkpoint_id === checkpointId);
    if (found === undefined)
      throw new ApiError(404, 'checkpoint_not_found', `checkpoint ${String(checkpointId)} not found`);
    response.json(found);
  };

  route(router, stateAtCheckpoint, async (request, response, { body }) => {
    await stateAt(request, response, body.checkpoint);
  });

  route(router, getStateAt, async (request, response) => {
    await stateAt(request, response, String(request.params.checkpoint_id));
  });

  const history = async (
    request: Request,
    response: Response,
    filter: { limit: number; before?: string | undefined; metadata?: Record<string, unknown> | undefined },
  ) => {
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
    await threads.authorize(pathId(request, 'thread_id'), ownerOf(response));
    throw new ApiError(
      403,
      'state_not_writable',
      "Keel's thread state is written by runs only: send the message as a run's input, or change the thread's metadata with PATCH /threads/:thread_id",
    );
  };
  route(router, updateState, stateNotWritable);
  route(router, patchState, stateNotWritable);

  route(router, getHistory, async (request, response, { query }) => {
    await history(request, response, query);
  });

  route(router, searchHistory, async (request, response, { body }) => {
    await history(request, response, body);
  });

  return router;
}
