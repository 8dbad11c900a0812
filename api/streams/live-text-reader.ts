/**
 * Reading a model call's live text from the worker running it (decision 0340). The workflow logs
 * `message.started` as it schedules the call; the API then asks Temporal which attempt is running
 * and on which worker (the pending activity's attempt, state and the worker's identity, which
 * carries the worker's live text URL), and reads the text there, piece by piece. A failed attempt
 * (the model's error, a worker killed) sends it back to Temporal's description for the next one.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { loadEncryptionKeys } from '../../codec/keys';
import { LiveTextKeys } from '../../codec/live-text-token';
import type { KeelConfig } from '../../platform/config';
import { refusedLiveUrl, type LiveWorkerEntry } from '../../platform/live-workers';
import { withCallSignal } from '../gateway/call-signal';

/** A piece of an attempt's text, and the text's length once it is appended. */
export interface LivePiece {
  attempt: number;
  text: string;
  chars: number;
}

export interface LiveCallRef {
  workflowId: string;
  runId: string;
  step: number;
}

/** The marker in a worker's identity before its live text URL (worker/live-text-server.ts). */
const liveUrlMarker = ' live=';
/**
 * Between describes while no attempt can be read: quick at first (a call is usually picked up at
 * once), and after `patientAfterMs` of waiting (no worker: a deploy, an outage) at most one every
 * 2 s per stream, so that hundreds of open streams do not ask Temporal hundreds of times a second.
 */
const backoffMs = { first: 25, max: 500, patient: 2_000, patientAfterMs: 5_000 };
/**
 * The longest line a worker may send: a piece is one model delta, a few characters. A line past
 * it (a sender that never ends its line) or one that is not a piece ends live reading of the
 * call, whose text then comes whole with the answer, instead of being buffered without a bound.
 */
export const maxLiveLineChars = 256 * 1024;
const { PENDING_ACTIVITY_STATE_STARTED: started, PENDING_ACTIVITY_STATE_CANCEL_REQUESTED: cancelRequested } =
  temporal.api.enums.v1.PendingActivityState;

/** A model call pending in a workflow's description: its attempt, where its text is served, whether it runs. */
export interface PendingModelCall {
  attempt: number;
  url: string | undefined;
  started: boolean;
}

/** The model call pending in `described`, if any. */
export function pendingModelCall(
  described: temporal.api.workflowservice.v1.IDescribeWorkflowExecutionResponse,
): PendingModelCall | undefined {
  const pending = described.pendingActivities?.find(
    (activity) => activity.activityType?.name === 'callModel',
  );
  if (pending === undefined || pending === null) return undefined;
  const identity = pending.lastWorkerIdentity ?? '';
  const at = identity.indexOf(liveUrlMarker);
  return {
    attempt: pending.attempt ?? 1,
    url: at === -1 ? undefined : identity.slice(at + liveUrlMarker.length),
    started: pending.state === started || pending.state === cancelRequested,
  };
}

/** The attempt of the model call running now, and where its text is served; undefined when none runs. */
export async function runningAttempt(
  client: Client,
  workflowId: string,
  signal: AbortSignal,
): Promise<PendingModelCall | undefined> {
  const described = await withCallSignal(client, signal, () =>
    client.workflowService.describeWorkflowExecution({
      namespace: client.options.namespace,
      execution: { workflowId },
    }),
  );
  return pendingModelCall(described);
}

/**
 * The call's text as it streams, attempt after attempt, until an attempt completes or `signal`
 * aborts (the caller aborts once the answer is in the log). Each attempt's pieces start from its
 * first; a reconnection to the same attempt repeats pieces the caller skips by `chars`.
 */
export async function* readLiveText(
  client: Client,
  keys: LiveTextKeys,
  call: LiveCallRef,
  signal: AbortSignal,
  workers: ReadLiveTextOptions,
): AsyncGenerator<LivePiece> {
  let pause = backoffMs.first;
  let waitingSince = Date.now();
  /** The first attempt not yet read to its end. */
  let next = 1;
  while (!signal.aborted) {
    let running;
    try {
      running = await runningAttempt(client, call.workflowId, signal);
    } catch {
      if (signal.aborted) return;
      running = { attempt: 0, url: undefined, started: false };
    }
    // No model call pending: it finished before we looked, and its text is in the log.
    if (running === undefined) return;
    // A worker without a live endpoint publishes into the log (`KEEL_TOKEN_CHANNEL=history`).
    if (running.started && running.url === undefined) return;
    // Anything that polls the task queue names its own URL: the token goes only where workers are.
    const refused = running.url === undefined ? undefined : refusedLiveUrl(workers.allowed, running.url);
    if (refused !== undefined) {
      workers.onRefused?.(running.url!, refused);
      return;
    }
    // The attempt running now; or, while a retry waits, the one that just failed (its worker
    // keeps its text a while), so a client sees what it streamed before the retry, as it would
    // have in the log.
    const attempt = running.started ? running.attempt : running.attempt - 1;
    if (running.url !== undefined && attempt >= next && attempt >= 1) {
      const ended = yield* readAttempt(running.url, keys, call, attempt, signal, workers.onRefused);
      if (ended === 'completed' || ended === 'refused') return;
      if (ended === 'failed' || !running.started) next = attempt + 1;
      if (ended !== 'lost') {
        pause = backoffMs.first;
        waitingSince = Date.now();
      }
    }
    await sleep(pause, undefined, { signal }).catch(() => undefined);
    const patient = Date.now() - waitingSince >= backoffMs.patientAfterMs;
    pause = Math.min(pause * 2, patient ? backoffMs.patient : backoffMs.max);
  }
}

/**
 * One attempt's text from its worker: how it ended, `lost` (the worker or the network went) or
 * `refused` (it sent what no worker sends; `onRefused` hears why).
 */
async function* readAttempt(
  url: string,
  keys: LiveTextKeys,
  call: LiveCallRef,
  attempt: number,
  signal: AbortSignal,
  onRefused: ReadLiveTextOptions['onRefused'],
): AsyncGenerator<LivePiece, 'completed' | 'failed' | 'lost' | 'refused'> {
  const query = new URLSearchParams({
    workflow_id: call.workflowId,
    run_id: call.runId,
    step: String(call.step),
    attempt: String(attempt),
  });
  let response: Response;
  try {
    response = await fetch(`${url}/live-text?${query.toString()}`, {
      headers: { authorization: `Bearer ${keys.sign(call.workflowId)}` },
      signal,
    });
  } catch {
    return 'lost';
  }
  // Not (or no longer) on that worker: the description may be behind; look again.
  if (!response.ok || response.body === null) {
    await response.body?.cancel().catch(() => undefined);
    return 'lost';
  }
  const decoder = new TextDecoder();
  let buffered = '';
  const refuse = async (reason: string) => {
    onRefused?.(url, reason);
    await response.body?.cancel().catch(() => undefined);
    return 'refused' as const;
  };
  try {
    for await (const bytes of response.body as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(bytes, { stream: true });
      let newline;
      while ((newline = buffered.indexOf('\n')) !== -1) {
        if (newline > maxLiveLineChars) break;
        const line = liveLine(buffered.slice(0, newline));
        if (line === undefined) return await refuse('sent a line that is not a piece of text');
        buffered = buffered.slice(newline + 1);
        if ('end' in line) return line.end;
        yield { attempt, text: line.text, chars: line.chars };
      }
      if (buffered.length > maxLiveLineChars)
        return await refuse(`sent a line longer than ${maxLiveLineChars} characters`);
    }
  } catch {
    return 'lost';
  }
  return 'lost';
}

/** A line as the worker's endpoint writes it, or undefined for anything else. */
function liveLine(
  text: string,
): { text: string; chars: number } | { end: 'completed' | 'failed' } | undefined {
  let line: unknown;
  try {
    line = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof line !== 'object' || line === null) return undefined;
  const { end, text: piece, chars } = line as Record<string, unknown>;
  if (end === 'completed' || end === 'failed') return { end };
  if (typeof piece === 'string' && typeof chars === 'number' && Number.isSafeInteger(chars))
    return { text: piece, chars };
  return undefined;
}

/** Which worker URLs the API reads from, and who hears of one it refused. */
export interface ReadLiveTextOptions {
  allowed: readonly LiveWorkerEntry[];
  onRefused?: (url: string, reason: string) => void;
}

/**
 * Where this API reads live text from, or undefined on the history channel. The token key comes
 * from the encryption keys the API already holds to read payloads.
 */
export function liveTextSource(
  client: Client,
  config: Pick<KeelConfig, 'tokens' | 'encryption'>,
  logger: { warn(details: object, message: string): void },
): ((call: LiveCallRef, signal: AbortSignal) => AsyncIterable<LivePiece>) | undefined {
  if (config.tokens.channel !== 'live') return undefined;
  let keys: Promise<LiveTextKeys> | undefined;
  const workers: ReadLiveTextOptions = {
    allowed: config.tokens.liveWorkers,
    onRefused: (url, reason) =>
      logger.warn({ url, reason }, 'live text not read from this worker; the answer comes whole'),
  };
  return async function* read(call, signal) {
    keys ??= loadEncryptionKeys(config.encryption).then((loaded) => new LiveTextKeys(loaded));
    yield* readLiveText(client, await keys, call, signal, workers);
  };
}
