import { Router, type Response } from 'express';
import { z } from 'zod';
import type { SubmitInput } from '../../common/messages';
import { isTerminal, type Run } from '../../common/run';
import type { Conversations } from '../conversations';
import { operation, route } from '../contract';
import { ApiError } from '../errors';
import { checkInput } from '../../workflows/core/validate';
import { requireAssistant, runMetadataOf } from '../protocol/assistants';
import { toLangChainMessages } from '../protocol/langchain-messages';
import { finalValues as finalValuesSchema, run as runSchema } from '../response-schemas';
import { waitForRun } from '../run-waiter';
import {
  cancelBody,
  createRunBody,
  inputContent,
  listQuery,
  runPath,
  threadPath,
  waitQuery,
  type CreateRunBody,
} from '../schemas';
import { clientGone, ownerOf, pathId } from '../validate';
import { createHash, randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';

const idempotencyKey = {
  'Idempotency-Key': {
    schema: z.string(),
    description: 'Without a run_id: retries with the same key reach the same run',
  },
};
const runAnswer = { description: 'The run', schema: runSchema };
const deferred = {
  description: 'Still running when timeout_s passed: the run, status deferred (Location names it)',
  schema: runSchema,
};
const finished = {
  description: "The run is over: the thread's values, and __error__ when it did not complete",
  schema: finalValuesSchema,
};

export const createRun = operation({
  method: 'post',
  path: '/threads/{thread_id}/runs',
  summary:
    'Create a run (not awaited). Durable: with no worker holding the thread it is still taken, `queued`',
  params: threadPath,
  headers: idempotencyKey,
  body: createRunBody,
  responses: { 200: runAnswer },
  errors: [409, 503],
});

export const waitRun = operation({
  method: 'post',
  path: '/threads/{thread_id}/runs/wait',
  summary:
    'Create a run and wait for its final values; 202 with the run `deferred` when timeout_s passes first',
  params: threadPath,
  headers: idempotencyKey,
  query: waitQuery,
  body: createRunBody,
  responses: { 200: finished, 202: deferred },
  errors: [409, 503],
});

export const listRuns = operation({
  method: 'get',
  path: '/threads/{thread_id}/runs',
  summary: 'List runs, newest first',
  params: threadPath,
  query: listQuery,
  responses: { 200: { description: 'Runs, newest first', schema: z.array(runSchema) } },
  errors: [503],
});

export const getRun = operation({
  method: 'get',
  path: '/threads/{thread_id}/runs/{run_id}',
  summary: 'Get a run',
  params: runPath,
  responses: { 200: runAnswer },
  errors: [503],
});

export const joinRun = operation({
  method: 'get',
  path: '/threads/{thread_id}/runs/{run_id}/join',
  summary: 'Wait for a run; 202 with the run `deferred` when timeout_s passes first',
  params: runPath,
  query: waitQuery,
  responses: { 200: finished, 202: deferred },
  errors: [503],
});

export const cancelRun = operation({
  method: 'post',
  path: '/threads/{thread_id}/runs/{run_id}/cancel',
  summary: 'Cancel a run (idempotent)',
  params: runPath,
  body: cancelBody,
  responses: {
    200: runAnswer,
    202: {
      description: 'The cancel is queued: no worker holds the thread right now',
      schema: z.object({ run_id: z.string(), thread_id: z.string(), cancel: z.literal('queued') }),
    },
  },
  errors: [503],
});

export const runOperations = [createRun, waitRun, listRuns, getRun, joinRun, cancelRun];

/**
 * The run id an `Idempotency-Key` stands for: a client that retries with the same key (and no
 * `run_id`) reaches the same run, never a second one. Derived, so no table is kept anywhere.
 */
export function idempotentRunId(key: string | undefined): string | undefined {
  if (key === undefined || key.trim() === '') return undefined;
  return `idem-${createHash('sha256').update(key.trim()).digest('hex').slice(0, 32)}`;
}

/** Submits a run from a create-run body (creating the thread first with `if_not_exists: "create"`). */
export async function submitRunFromBody(
  conversations: Conversations,
  threadId: string,
  body: CreateRunBody,
  response: Response,
): Promise<Run> {
  const owner = ownerOf(response);
  requireAssistant(body.assistant_id);
  if (body.webhook !== undefined) await conversations.checkWebhook(body.webhook);
  const create =
    body.if_not_exists === 'create'
      ? conversations.newConversation(threadId, owner, runMetadataOf(body.assistant_id), {})
      : undefined;
  if (create === undefined) await conversations.authorize(threadId, owner);
  else await conversations.authorizeCreate(threadId, owner);
  const input: SubmitInput = {
    run_id: body.run_id ?? idempotentRunId(response.req.header('idempotency-key')) ?? randomUUID(),
    assistant_id: body.assistant_id,
    content: inputContent(body),
    multitask_strategy: body.multitask_strategy,
    metadata: body.metadata,
    ...(body.config.model === undefined ? {} : { model: body.config.model }),
    ...(body.webhook === undefined ? {} : { webhook: body.webhook }),
  };
  // Every rule that needs no thread state is checked here, before anything is sent: an input
  // that may go by signal must not be one the thread would only refuse.
  const invalid = checkInput(input);
  if (invalid !== undefined) throw new ApiError(422, 'invalid_input', invalid.message, 'input.messages');
  return conversations.submitRun(threadId, input, create);
}

/**
 * A signal that aborts with either, and a release that unhooks it from both (the API's
 * `stopping` signal lives as long as the process). Not AbortSignal.any: on Node 20 its result
 * can be collected while still needed.
 */
function eitherAborts(first: AbortSignal, second: AbortSignal | undefined) {
  const controller = new AbortController();
  const abort = (): void => controller.abort();
  const signals = second === undefined ? [first] : [first, second];
  for (const signal of signals) {
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
  }
  return {
    signal: controller.signal,
    release: () => signals.forEach((signal) => signal.removeEventListener('abort', abort)),
  };
}

/**
 * `stopping` aborts when the API shuts down: a caller still waiting then gets its answer at once
 * (202 with the run deferred), as if its wait had timed out; the run goes on.
 */
export function runRoutes(conversations: Conversations, stopping?: AbortSignal): Router {
  const router = Router();
  // Every waiting request listens on `stopping` until it answers: more than Node's default ten
  // at once is normal load, not a leak (each listener is removed when its request ends).
  if (stopping !== undefined) setMaxListeners(0, stopping);

  const submit = (threadId: string, body: CreateRunBody, response: Response): Promise<Run> =>
    submitRunFromBody(conversations, threadId, body, response);

  /** The thread's values once a run is over, as LangGraph's wait and join return them. */
  const finalValues = async (threadId: string, run: Run) => {
    const messages = toLangChainMessages(await conversations.transcript(threadId));
    return {
      messages,
      ...(run.status === 'completed'
        ? {}
        : {
            __error__: {
              error: run.error?.type ?? run.status,
              message: run.error?.message ?? `run ${run.status}`,
            },
          }),
    };
  };

  /** Waits for `run`; answers 200 with the values, or 202 with the run marked `deferred`. */
  const answerWhenDone = async (
    threadId: string,
    run: Run,
    timeoutS: number,
    response: Response,
    signal: AbortSignal,
  ) => {
    const location = `/threads/${threadId}/runs/${run.run_id}`;
    const waiting = eitherAborts(signal, stopping);
    const finished = isTerminal(run.status)
      ? run
      : await waitForRun(conversations.client, threadId, run.run_id, timeoutS * 1000, waiting.signal).finally(
          waiting.release,
        );
    response.setHeader('Content-Location', location);
    if (finished !== undefined) {
      response.json(await finalValues(threadId, finished));
      return;
    }
    // The caller stopped waiting (timeout or disconnect); the run itself goes on.
    const deferred = await conversations.deferRun(threadId, run);
    if (signal.aborted) return;
    response.setHeader('Location', location);
    response
      .status(isTerminal(deferred.status) ? 200 : 202)
      .json(isTerminal(deferred.status) ? await finalValues(threadId, deferred) : deferred);
  };

  route(router, createRun, async (request, response, { body }) => {
    const threadId = pathId(request, 'thread_id');
    const run = await submit(threadId, body, response);
    response.setHeader('Content-Location', `/threads/${threadId}/runs/${run.run_id}`);
    response.json(run);
  });

  route(router, waitRun, async (request, response, { query: { timeout_s }, body }) => {
    const threadId = pathId(request, 'thread_id');
    const signal = clientGone(request, response);
    const run = await submit(threadId, body, response);
    await answerWhenDone(threadId, run, timeout_s, response, signal);
  });

  route(router, listRuns, async (request, response, { query: { limit } }) => {
    const threadId = pathId(request, 'thread_id');
    await conversations.authorize(threadId, ownerOf(response));
    response.json(await conversations.listRuns(threadId, limit));
  });

  route(router, getRun, async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    await conversations.authorize(threadId, ownerOf(response));
    response.json(await conversations.getRun(threadId, pathId(request, 'run_id')));
  });

  route(router, joinRun, async (request, response, { query: { timeout_s } }) => {
    const threadId = pathId(request, 'thread_id');
    const runId = pathId(request, 'run_id');
    const signal = clientGone(request, response);
    await conversations.authorize(threadId, ownerOf(response));
    const run = await conversations.getRun(threadId, runId);
    await answerWhenDone(threadId, run, timeout_s, response, signal);
  });

  route(router, cancelRun, async (request, response, { body: { reason } }) => {
    const threadId = pathId(request, 'thread_id');
    const runId = pathId(request, 'run_id');
    await conversations.authorize(threadId, ownerOf(response));
    const delivery = await conversations.cancelRun(threadId, runId, reason);
    if (delivery.kind === 'taken') {
      response.json(delivery.value);
      return;
    }
    // The thread could not answer now: the cancel is in its history and applies when it runs.
    response.status(202).json({ run_id: runId, thread_id: threadId, cancel: 'queued' });
  });

  return router;
}
