import { Router, type Response } from 'express';
import type { SubmitInput } from '../../common/messages';
import { isTerminal, type Run } from '../../common/run';
import type { Conversations } from '../conversations';
import { ApiError } from '../errors';
import { checkInput } from '../../workflows/validate';
import { runMetadataOf, type Assistants } from '../protocol/assistants';
import { toLangChainMessages } from '../protocol/langchain-messages';
import { waitForRun } from '../run-waiter';
import {
  cancelBody,
  createRunBody,
  inputContent,
  listQuery,
  waitQuery,
  type CreateRunBody,
} from '../schemas';
import { clientGone, ownerOf, parseBody, parseQuery, pathId } from '../validate';
import { createHash, randomUUID } from 'node:crypto';

/**
 * The run id an `Idempotency-Key` stands for: a client that retries with the same key (and no
 * `run_id`) reaches the same run, never a second one. Derived, so no table is kept anywhere.
 */
export function idempotentRunId(key: string | undefined): string | undefined {
  if (key === undefined || key.trim() === '') return undefined;
  return `idem-${createHash('sha256').update(key.trim()).digest('hex').slice(0, 32)}`;
}

/** What submitting a run needs. */
export interface RunServices {
  conversations: Conversations;
  assistants: Assistants;
}

/** Submits a run from a create-run body (creating the thread first with `if_not_exists: "create"`). */
export async function submitRunFromBody(
  { conversations, assistants }: RunServices,
  threadId: string,
  body: CreateRunBody,
  response: Response,
): Promise<Run> {
  const owner = ownerOf(response);
  const settings = await assistants.settingsFor(body.assistant_id, owner);
  if (body.webhook !== undefined) await conversations.checkWebhook(body.webhook);
  // A run through an assistant of one's own carries its configuration (the deployment's defaults
  // fill what it leaves out); the default assistant runs the thread as it is configured.
  const config =
    settings === undefined
      ? undefined
      : conversations.threadConfig({
          ...settings,
          ...(body.config.model === undefined ? {} : { model: body.config.model }),
        });
  const create =
    body.if_not_exists === 'create'
      ? conversations.newConversation(threadId, owner, runMetadataOf(body.assistant_id), settings ?? {})
      : undefined;
  if (create === undefined) await conversations.authorize(threadId, owner);
  const input: SubmitInput = {
    run_id: body.run_id ?? idempotentRunId(response.req.header('idempotency-key')) ?? randomUUID(),
    assistant_id: body.assistant_id,
    content: inputContent(body),
    multitask_strategy: body.multitask_strategy,
    metadata: body.metadata,
    ...(body.config.model === undefined ? {} : { model: body.config.model }),
    ...(config === undefined ? {} : { config, model: config.model }),
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
export function runRoutes(services: RunServices, stopping?: AbortSignal): Router {
  const router = Router();
  const { conversations } = services;

  const submit = (threadId: string, body: CreateRunBody, response: Response): Promise<Run> =>
    submitRunFromBody(services, threadId, body, response);

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

  router.post('/threads/:thread_id/runs', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const run = await submit(threadId, parseBody(createRunBody, request), response);
    response.setHeader('Content-Location', `/threads/${threadId}/runs/${run.run_id}`);
    response.json(run);
  });

  router.post('/threads/:thread_id/runs/wait', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const { timeout_s } = parseQuery(waitQuery, request);
    const body = parseBody(createRunBody, request);
    const signal = clientGone(request, response);
    const run = await submit(threadId, body, response);
    await answerWhenDone(threadId, run, timeout_s, response, signal);
  });

  router.get('/threads/:thread_id/runs', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const { limit } = parseQuery(listQuery, request);
    await conversations.authorize(threadId, ownerOf(response));
    response.json(await conversations.listRuns(threadId, limit));
  });

  router.get('/threads/:thread_id/runs/:run_id', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    await conversations.authorize(threadId, ownerOf(response));
    response.json(await conversations.getRun(threadId, pathId(request, 'run_id')));
  });

  router.get('/threads/:thread_id/runs/:run_id/join', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const runId = pathId(request, 'run_id');
    const { timeout_s } = parseQuery(waitQuery, request);
    const signal = clientGone(request, response);
    await conversations.authorize(threadId, ownerOf(response));
    const run = await conversations.getRun(threadId, runId);
    await answerWhenDone(threadId, run, timeout_s, response, signal);
  });

  router.post('/threads/:thread_id/runs/:run_id/cancel', async (request, response) => {
    const threadId = pathId(request, 'thread_id');
    const runId = pathId(request, 'run_id');
    const { reason } = parseBody(cancelBody, request);
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
