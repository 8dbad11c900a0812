/**
 * Stateless runs (`POST /runs`, `/runs/wait`; `/runs/stream` is in streams.ts): a run on a thread
 * of its own, created for it, and deleted when the run is over unless `on_completion: "keep"`
 * (docs/decisions/0094-runs.md).
 */
import { randomUUID } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { isTerminal } from '../../common/run';
import { ApiError } from '../errors';
import { protocolRunBody, statelessRunBody, type ProtocolRunBody } from './run-schemas';
import { startRun, type RunServices, type StartedRun } from './run-submission';
import { waitForRun } from './run-waiter';
import { operation, route } from '../contract';
import { finalValues, run as runSchema } from '../response-schemas';
import { waitQuery } from '../schemas';
import { clientGone, parseBody } from '../validate';
import { answerWhenDone } from './run-routes';

export const createStatelessRun = operation({
  method: 'post',
  path: '/runs',
  summary:
    'A stateless run (not awaited): a thread made for it, deleted once the run is over unless on_completion is "keep"',
  body: statelessRunBody,
  responses: { 200: { description: 'The run', schema: runSchema } },
  errors: [404, 409, 429, 503],
});

export const waitStatelessRun = operation({
  method: 'post',
  path: '/runs/wait',
  summary:
    "A stateless run, awaited: its thread's final values; 202 with the run deferred when timeout_s passes",
  query: waitQuery,
  body: statelessRunBody,
  responses: {
    200: {
      description: "The thread's values once the run is over (or waits on a human)",
      schema: finalValues.extend({ __interrupt__: z.array(z.unknown()).optional() }),
    },
    202: { description: 'Still running: the run, status deferred', schema: runSchema },
  },
  errors: [404, 409, 429, 503],
});

export const statelessRunOperations = [createStatelessRun, waitStatelessRun];

/** How long the API keeps watching a stateless run to delete its thread. */
const watchMs = 24 * 3600 * 1000;

/** The body of a stateless run: a new turn on a thread made for it. */
export function statelessBody(request: Request): ProtocolRunBody {
  const body = parseBody(protocolRunBody, request);
  if (body.command !== undefined && body.command !== null)
    throw new ApiError(
      422,
      'validation_error',
      'a stateless run has no thread to resume: send input',
      'command',
    );
  return { ...body, if_not_exists: 'create' };
}

/**
 * Deletes the run's thread once the run is over, when asked to. The API process that took the
 * run does it; should it stop first, the thread stays (and `POST /threads/cleanup` finds it).
 */
export async function deleteWhenDone(
  services: RunServices,
  body: ProtocolRunBody,
  { run, thread }: StartedRun,
  stopping: AbortSignal | undefined,
): Promise<void> {
  if ((body.on_completion ?? 'delete') !== 'delete') return;
  const { client } = services.gateway;
  const ended = isTerminal(run.status)
    ? run
    : await waitForRun(client, thread, run.run_id, watchMs, stopping).catch(() => undefined);
  if (ended === undefined) return;
  await services.threadDirectory.remove(thread).catch(() => undefined);
}

export function statelessRunRoutes(services: RunServices, stopping?: AbortSignal): Router {
  const router = Router();

  const start = async (request: Request, response: Response, deadline?: number) => {
    const body = statelessBody(request);
    const options = deadline === undefined ? {} : { wait: true, deadline };
    return { body, started: await startRun(services, randomUUID(), body, response, options) };
  };

  route(router, createStatelessRun, async (request, response) => {
    const { body, started } = await start(request, response);
    const { run } = started;
    response.setHeader('Content-Location', `/threads/${run.thread_id}/runs/${run.run_id}`);
    response.json(run);
    void deleteWhenDone(services, body, started, stopping);
  });

  route(router, waitStatelessRun, async (request, response, { query: { timeout_s } }) => {
    const signal = clientGone(request, response);
    const deadline = Date.now() + timeout_s * 1000;
    const { body, started } = await start(request, response, deadline);
    const { thread } = started;
    const left = Math.max(0, (deadline - Date.now()) / 1000);
    const answered = await answerWhenDone(services, thread, started, left, response, signal, stopping);
    await deleteWhenDone(services, body, { run: answered, thread }, stopping);
  });

  return router;
}
