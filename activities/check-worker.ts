/**
 * `checkWorker` (decision 0412): asks the worker a Temporal identity names whether it still runs.
 * A worker advertises its live text endpoint in its identity (`pid@host live=<url>`, decision
 * 0340); `GET <url>/worker` there answers with the `pid@host` of the process serving it. So a
 * process that answers as itself still runs; a refused connection, no answer within the timeout,
 * or another process's answer (a replacement on the same port) mean the worker is gone.
 */
import type { CheckWorkerInput, WorkerState } from '../common/activities';

const liveUrlMarker = ' live=';

/** A worker that runs answers at once; one frozen or unreachable is as good as gone to its calls. */
const answerTimeoutMs = 3_000;

export async function checkWorker({ identity }: CheckWorkerInput): Promise<WorkerState> {
  const at = identity.indexOf(liveUrlMarker);
  if (at === -1) return 'unknown';
  const process = identity.slice(0, at);
  let url: URL;
  try {
    url = new URL('worker', `${identity.slice(at + liveUrlMarker.length).replace(/\/*$/, '')}/`);
  } catch {
    return 'unknown';
  }
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(answerTimeoutMs) });
  } catch {
    return 'stopped';
  }
  // A worker of an earlier release serves no `/worker`: it runs, but cannot say it is that process.
  if (response.status === 404) return 'unknown';
  const body = (await response.json().catch(() => ({}))) as { worker?: unknown };
  if (!response.ok || typeof body.worker !== 'string') return 'unknown';
  return body.worker === process ? 'running' : 'stopped';
}
