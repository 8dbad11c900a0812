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

/** A worker's answer is one short JSON object: anything longer is not a worker's answer. */
const answerMaxBytes = 4_096;

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
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'unknown';
  const signal = AbortSignal.timeout(answerTimeoutMs);
  let response: Response;
  try {
    // Not followed: the endpoint the identity names answers for itself, or not at all.
    response = await fetch(url, { signal, redirect: 'manual' });
  } catch {
    return 'stopped';
  }
  // A worker of an earlier release serves no `/worker`: it runs, but cannot say it is that process.
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    return 'unknown';
  }
  const text = await boundedText(response, answerMaxBytes);
  let body: { worker?: unknown } = {};
  try {
    body = text === undefined ? {} : (JSON.parse(text) as { worker?: unknown });
  } catch {
    // Not JSON: not a worker's answer.
  }
  if (typeof body.worker !== 'string') return 'unknown';
  return body.worker === process ? 'running' : 'stopped';
}

/** The body as text, or undefined once it passes `maxBytes` (the rest is not read) or breaks off. */
async function boundedText(response: Response, maxBytes: number): Promise<string | undefined> {
  const reader: ReadableStreamDefaultReader<Uint8Array> | undefined = response.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel();
        return undefined;
      }
      chunks.push(value);
    }
  } catch {
    return undefined;
  }
  return Buffer.concat(chunks).toString('utf8');
}
