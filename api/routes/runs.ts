import { Router, type Response } from 'express';
import * as messages from '../../common/messages';
import { isTerminal, type Run } from '../../common/run';
import { toInterrupt } from '../protocol/interrupts';
import { toLangChainMessages } from '../protocol/langchain-messages';
import { cancelQuery, protocolRunBody, runListQuery } from '../protocol/run-schemas';
import { startRun, waitForRunOrInterrupt, type RunServices } from '../protocol/run-submission';
import { waitForRun } from '../run-waiter';
import { cancelBody, waitQuery } from '../schemas';
import { clientGone, ownerOf, parseBody, parseQuery, pathId } from '../validate';

export { idempotentRunId, type RunServices } from '../protocol/run-submission';

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

/** The thread's values once a run is over or interrupted, as LangGraph's wait and join return them. */
export async function valuesAfter(services: RunServices, threadId: string, run: Run) {
  const { conversations } = services;
  const messages = toLangChainMessages(await conversations.transcript(threadId));
  if (!isTerminal(run.status)) {
    const pending = await conversations.pendingApprovals(threadId);
    return { messages, __interrupt__: pending.map(toInterrupt) };
  }
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
}

/**
 * Waits for `run` to end or to wait on a human; answers 200 with the values (and the interrupts),
 * or 202 with the run marked `deferred`. `stopping` aborts when the API shuts down: a caller
 * still waiting then gets its answer at once, as if its wait had timed out; the run goes on.
 * Resolves with the run as the answer left it.
 */
export async function answerWhenDone(
  services: RunServices,
  threadId: string,
  run: Run,
  timeoutS: number,
  response: Response,
  signal: AbortSignal,
  stopping: AbortSignal | undefined,
): Promise<Run> {
  const { conversations } = services;
  const location = `/threads/${threadId}/runs/${run.run_id}`;
  const waiting = eitherAborts(signal, stopping);
  const finished = await waitForRunOrInterrupt(
    conversations,
    threadId,
    run,
    timeoutS * 1000,
    waiting.signal,
  ).finally(waiting.release);
  response.setHeader('Content-Location', location);
  if (finished !== undefined) {
    response.json(await valuesAfter(services, threadId, finished));
    return finished;
  }
  // The caller stopped waiting (timeout or disconnect); the run itself goes on.
  const deferred = await conversations.deferRun(threadId, run);
  if (signal.aborted) return deferred;
  response.setHeader('Location', location);
  response
    .status(isTerminal(deferred.status) ? 200 : 202)
    .json(isTerminal(deferred.status) ? await valuesAfter(services, threadId, deferred) : deferred);
  return deferred;
}

export function runRoutes(services: RunServices, stopping?: AbortSignal): Router {
  const router = Router();
  const { conversations } = services;

  router.post('/threads/:thread_id/runs', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const { run } = await startRun(services, threadId, parseBody(protocolRunBody, request), response);
    response.setHeader('Content-Location', `/threads/${threadId}/runs/${run.run_id}`);
    response.json(run);
  });

  router.post('/threads/:thread_id/runs/wait', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const { timeout_s } = parseQuery(waitQuery, request);
    const body = parseBody(protocolRunBody, request);
    const signal = clientGone(request, response);
    const { run } = await startRun(services, threadId, body, response);
    await answerWhenDone(services, threadId, run, timeout_s, response, signal, stopping);
  });

  router.get('/threads/:thread_id/runs', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const { limit, offset, status } = parseQuery(runListQuery, request);
    await conversations.authorize(threadId, ownerOf(response));
    const runs = await conversations.listRuns(threadId, status === undefined ? offset + limit : 1_000);
    const wanted = status === undefined ? runs : runs.filter((run) => run.status === status);
    response.json(wanted.slice(offset, offset + limit));
  });

  router.get('/threads/:thread_id/runs/:run_id', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    await conversations.authorize(threadId, ownerOf(response));
    response.json(await conversations.getRun(threadId, pathId(request, 'run_id')));
  });

  /** A finished run's record goes; its messages stay in the thread (409 `run_active` before it ends). */
  router.delete('/threads/:thread_id/runs/:run_id', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const runId = pathId(request, 'run_id');
    await conversations.authorize(threadId, ownerOf(response));
    await conversations.getRun(threadId, runId);
    await conversations.read(threadId, () =>
      conversations.handle(threadId).executeUpdate(messages.deleteRunUpdate, { args: [{ run_id: runId }] }),
    );
    response.status(204).end();
  });

  router.get('/threads/:thread_id/runs/:run_id/join', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const runId = pathId(request, 'run_id');
    const { timeout_s } = parseQuery(waitQuery, request);
    const signal = clientGone(request, response);
    await conversations.authorize(threadId, ownerOf(response));
    const run = await conversations.getRun(threadId, runId);
    await answerWhenDone(services, threadId, run, timeout_s, response, signal, stopping);
  });

  /**
   * Cancels a run. `action=rollback` cancels as `interrupt` does: Keel keeps the steps the run
   * committed (decision 0094). `wait=1` answers once the run has ended.
   */
  router.post('/threads/:thread_id/runs/:run_id/cancel', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const runId = pathId(request, 'run_id');
    const { reason } = parseBody(cancelBody, request);
    const { wait, action } = parseQuery(cancelQuery, request);
    await conversations.authorize(threadId, ownerOf(response));
    const why = reason ?? (action === 'rollback' ? 'rolled back' : undefined);
    const delivery = await conversations.cancelRun(threadId, runId, why);
    if (delivery.kind === 'taken') {
      const ended =
        wait && !isTerminal(delivery.value.status)
          ? await waitForRun(conversations.client, threadId, runId, 60_000, clientGone(request, response))
          : undefined;
      response.json(ended ?? delivery.value);
      return;
    }
    // The thread could not answer now: the cancel is in its history and applies when it runs.
    response.status(202).json({ run_id: runId, thread_id: threadId, cancel: 'queued' });
  });

  return router;
}
