/**
 * Stateless runs (`POST /runs`, `/runs/wait`; `/runs/stream` is in streams.ts): a run on a thread
 * of its own, created for it, and deleted when the run is over unless `on_completion: "keep"`
 * (docs/decisions/0094-runs.md).
 */
import { randomUUID } from 'node:crypto';
import { Router, type Request, type Response } from 'express';
import { isTerminal, type Run } from '../../common/run';
import { ApiError } from '../errors';
import { protocolRunBody, type ProtocolRunBody } from '../protocol/run-schemas';
import { startRun, type RunServices } from '../protocol/run-submission';
import { waitForRun } from '../run-waiter';
import { waitQuery } from '../schemas';
import { clientGone, parseBody, parseQuery } from '../validate';
import { answerWhenDone } from './runs';

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
  run: Run,
  stopping: AbortSignal | undefined,
): Promise<void> {
  if ((body.on_completion ?? 'delete') !== 'delete') return;
  const { client } = services.conversations;
  const ended = isTerminal(run.status)
    ? run
    : await waitForRun(client, run.thread_id, run.run_id, watchMs, stopping).catch(() => undefined);
  if (ended === undefined) return;
  await services.sessions.remove(run.thread_id).catch(() => undefined);
}

export function statelessRunRoutes(services: RunServices, stopping?: AbortSignal): Router {
  const router = Router();

  const start = async (request: Request, response: Response) => {
    const body = statelessBody(request);
    const { run } = await startRun(services, randomUUID(), body, response);
    return { body, run };
  };

  router.post('/runs', async (request, response) => {
    const { body, run } = await start(request, response);
    response.setHeader('Content-Location', `/threads/${run.thread_id}/runs/${run.run_id}`);
    response.json(run);
    void deleteWhenDone(services, body, run, stopping);
  });

  router.post('/runs/wait', async (request, response) => {
    const { timeout_s } = parseQuery(waitQuery, request);
    const signal = clientGone(request, response);
    const { body, run } = await start(request, response);
    const answered = await answerWhenDone(
      services,
      run.thread_id,
      run,
      timeout_s,
      response,
      signal,
      stopping,
    );
    await deleteWhenDone(services, body, answered, stopping);
  });

  return router;
}
