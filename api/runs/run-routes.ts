import { Router, type Response } from 'express';
import { z } from 'zod';
import { isTerminal, type Run } from '../../common/run';
import { operation, route } from '../contract';
import { toInterrupt } from '../protocol/interrupts';
import { cancelQuery, protocolRunBody, runListQuery, runStatusesOf } from './run-schemas';
import type { Submitted } from '../gateway/run-intake';
import type { ReadOptions } from '../gateway/thread-gateway';
import { startRun, waitForRunOrInterrupt, type RunServices } from './run-submission';
import { finalValues as finalValuesSchema, run as runSchema } from '../response-schemas';
import { waitForRun } from './run-waiter';
import { cancelBody, runPath, threadPath, waitQuery } from '../schemas';
import type { ThreadRef } from '../threads/thread-ref';
import { clientGone, ownerOf, pathId } from '../validate';
import { setMaxListeners } from 'node:events';

export { idempotentRunId, type RunServices } from './run-submission';

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
  description:
    "The run is over or waits on a human: the thread's values, __error__ when it did not complete, __interrupt__ while it waits",
  schema: finalValuesSchema.extend({ __interrupt__: z.array(z.unknown()).optional() }),
};

export const createRun = operation({
  method: 'post',
  path: '/threads/{thread_id}/runs',
  summary:
    'Create a run (not awaited). Durable: with no worker holding the thread it is still taken, `queued`',
  params: threadPath,
  headers: idempotencyKey,
  body: protocolRunBody,
  responses: { 200: runAnswer },
  errors: [409, 429, 503],
});

export const waitRun = operation({
  method: 'post',
  path: '/threads/{thread_id}/runs/wait',
  summary:
    'Create a run and wait for its final values; 202 with the run `deferred` when timeout_s passes first',
  params: threadPath,
  headers: idempotencyKey,
  query: waitQuery,
  body: protocolRunBody,
  responses: { 200: finished, 202: deferred },
  errors: [409, 429, 503],
});

export const listRuns = operation({
  method: 'get',
  path: '/threads/{thread_id}/runs',
  summary: 'List runs, newest first',
  params: threadPath,
  query: runListQuery,
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
  summary: 'Cancel a run (idempotent; action=interrupt|rollback, wait=1 answers once it ended)',
  params: runPath,
  query: cancelQuery,
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

export const deleteRun = operation({
  method: 'delete',
  path: '/threads/{thread_id}/runs/{run_id}',
  summary: "Delete a finished run's record; its messages stay in the thread (409 run_active before it ends)",
  params: runPath,
  responses: { 204: { description: 'Deleted' } },
  errors: [409, 503],
});

export const runOperations = [createRun, waitRun, listRuns, getRun, deleteRun, joinRun, cancelRun];

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
/**
 * The thread's values once a run is over or interrupted, as LangGraph's wait and join return them,
 * as JSON text: the messages' part is kept per thread, so a long thread's answer serializes only
 * what is new (`ThreadService.transcriptLangChainJson`). `read.until`: how long the caller still
 * waits for them (the run is over: only the reads are left).
 */
export async function valuesAfter(
  services: RunServices,
  thread: ThreadRef,
  run: Run,
  read: ReadOptions = {},
): Promise<string> {
  // A waited run's answer may have brought both (decision 0255): then nothing is asked.
  const messages = await services.threads.transcriptLangChainJson(thread, read, run);
  if (!isTerminal(run.status)) {
    const pending = await services.threads.pendingApprovals(thread, read, run);
    return withMessages(messages, { __interrupt__: pending.map(toInterrupt) });
  }
  return withMessages(
    messages,
    run.status === 'completed'
      ? {}
      : {
          __error__: {
            error: run.error?.type ?? run.status,
            message: run.error?.message ?? `run ${run.status}`,
          },
        },
  );
}

/** `JSON.stringify({ messages, ...rest })`, with `messages` already JSON. */
function withMessages(messages: string, rest: Record<string, unknown>): string {
  const tail = JSON.stringify(rest);
  return tail === '{}' ? `{"messages":${messages}}` : `{"messages":${messages},${tail.slice(1)}`;
}

/** Answers JSON text as `response.json` answers an object. */
function sendJson(response: Response, json: string): void {
  response.set('Content-Type', 'application/json').send(json);
}

/**
 * Waits for `run` to end or to wait on a human; answers 200 with the values (and the interrupts),
 * or 202 with the run marked `deferred`. `stopping` aborts when the API shuts down: a caller
 * still waiting then gets its answer at once, as if its wait had timed out; the run goes on.
 * Resolves with the run as the answer left it.
 */
export async function answerWhenDone(
  services: RunServices,
  thread: ThreadRef,
  submitted: Submitted,
  timeoutS: number,
  response: Response,
  signal: AbortSignal,
  stopping: AbortSignal | undefined,
): Promise<Run> {
  const { run } = submitted;
  const deadline = Date.now() + timeoutS * 1000;
  const location = `/threads/${thread.thread_id}/runs/${run.run_id}`;
  const waiting = eitherAborts(signal, stopping);
  const finished = await waitForRunOrInterrupt(
    services.conversations,
    thread,
    submitted,
    timeoutS * 1000,
    waiting.signal,
  ).finally(waiting.release);
  response.setHeader('Content-Location', location);
  if (finished !== undefined) {
    // The run is over: its values are read within what is left of the caller's wait, not the
    // read timeout (a worker slow to answer under load would turn a finished run into a 503).
    sendJson(response, await valuesAfter(services, thread, finished, { until: deadline }));
    return finished;
  }
  // The caller stopped waiting (timeout or disconnect); the run itself goes on.
  const deferred = await services.runs.deferRun(thread, run);
  if (signal.aborted) return deferred;
  response.setHeader('Location', location);
  if (isTerminal(deferred.status))
    sendJson(response.status(200), await valuesAfter(services, thread, deferred));
  else response.status(202).json(deferred);
  return deferred;
}

export function runRoutes(services: RunServices, stopping?: AbortSignal): Router {
  const router = Router();
  // Every waiting request listens on `stopping` until it answers: more than Node's default ten
  // at once is normal load, not a leak (each listener is removed when its request ends).
  if (stopping !== undefined) setMaxListeners(0, stopping);

  route(router, createRun, async (request, response, { body }) => {
    const threadId = pathId(request, 'thread_id');
    const { run } = await startRun(services, threadId, body, response);
    response.setHeader('Content-Location', `/threads/${threadId}/runs/${run.run_id}`);
    response.json(run);
  });

  route(router, waitRun, async (request, response, { query: { timeout_s }, body }) => {
    const threadId = pathId(request, 'thread_id');
    const signal = clientGone(request, response);
    // The wait's time runs from the request: taking the input in is part of it.
    const deadline = Date.now() + timeout_s * 1000;
    const started = await startRun(services, threadId, body, response, { wait: true, deadline });
    const left = Math.max(0, (deadline - Date.now()) / 1000);
    await answerWhenDone(services, started.thread, started, left, response, signal, stopping);
  });

  route(router, listRuns, async (request, response, { query: { limit, offset, status } }) => {
    const thread = await services.threads.authorize(pathId(request, 'thread_id'), ownerOf(response));
    const statuses = runStatusesOf(status);
    const runs = await services.runs.listRuns(thread, statuses === undefined ? offset + limit : 1_000);
    const wanted = statuses === undefined ? runs : runs.filter((run) => statuses.includes(run.status));
    response.json(wanted.slice(offset, offset + limit));
  });

  route(router, getRun, async (request, response) => {
    const thread = await services.threads.authorize(pathId(request, 'thread_id'), ownerOf(response));
    response.json(await services.runs.getRun(thread, pathId(request, 'run_id')));
  });

  /** A finished run's record goes; its messages stay in the thread (409 `run_active` before it ends). */
  route(router, deleteRun, async (request, response) => {
    const thread = await services.threads.authorize(pathId(request, 'thread_id'), ownerOf(response));
    const runId = pathId(request, 'run_id');
    await services.runs.deleteRun(thread, runId);
    response.status(204).end();
  });

  route(router, joinRun, async (request, response, { query: { timeout_s } }) => {
    const threadId = pathId(request, 'thread_id');
    const runId = pathId(request, 'run_id');
    const signal = clientGone(request, response);
    const thread = await services.threads.authorize(threadId, ownerOf(response));
    const run = await services.runs.getRun(thread, runId);
    await answerWhenDone(services, thread, { run }, timeout_s, response, signal, stopping);
  });

  /** How long a cancel without `wait` waits for a stopping run to end before answering it as it is. */
  const stoppingWaitMs = 10_000;

  /**
   * Cancels a run. `action=rollback` cancels as `interrupt` does: Keel keeps the steps the run
   * committed (decision 0094). `wait=1` answers once the run has ended.
   */
  route(router, cancelRun, async (request, response, { query: { wait, action }, body: { reason } }) => {
    const threadId = pathId(request, 'thread_id');
    const runId = pathId(request, 'run_id');
    const thread = await services.threads.authorize(threadId, ownerOf(response));
    const why = reason ?? (action === 'rollback' ? 'rolled back' : undefined);
    const delivery = await services.runs.cancelRun(thread, runId, why);
    if (delivery.kind === 'taken') {
      // A run stopped mid-answer ends once its model call has stopped and handed back its text
      // (about a heartbeat, decision 0370): the caller hears it cancelled, as before.
      const ended = !isTerminal(delivery.value.status)
        ? await waitForRun(
            services.gateway.client,
            thread,
            runId,
            wait ? 60_000 : stoppingWaitMs,
            clientGone(request, response),
          )
        : undefined;
      response.json(ended ?? delivery.value);
      return;
    }
    // The thread could not answer now: the cancel is in its history and applies when it runs.
    response.status(202).json({ run_id: runId, thread_id: threadId, cancel: 'queued' });
  });

  return router;
}
