/**
 * A prompt Stop without one-second heartbeats (decision 0420). On the live channel a model call
 * heartbeats at 80 % of its timeout, and Temporal tells an activity of its cancel only in a
 * heartbeat's answer. So the API that took a Stop (or an interrupting input) asks the worker
 * running the thread's model call, over the live channel, to beat at once: that beat's answer
 * carries the cancel. The worker is found as the live text is (decision 0340), only at an allowed
 * address (decision 0390), with the same token. A request that is lost, refused or late changes
 * nothing: the call's next slow beat carries the cancel, a few seconds later.
 */
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { loadEncryptionKeys } from '../../codec/keys';
import { LiveTextKeys } from '../../codec/live-text-token';
import type { KeelConfig } from '../../platform/config';
import { refusedLiveUrl, type LiveWorkerEntry } from '../../platform/live-workers';
import { pendingModelCall, runningAttempt } from './live-text-reader';

/** A worker answers a beat request at once; past this the slow beat will do. */
const beatRequestTimeoutMs = 2_000;

/** What became of a request: beaten, no call running, an address not allowed, or not reached. */
export type BeatAsked = 'beaten' | 'no-call' | 'refused' | 'lost';

type Described = temporal.api.workflowservice.v1.IDescribeWorkflowExecutionResponse;

/**
 * Asks the worker running `workflowId`'s model call to heartbeat now. `described`: the workflow
 * as described before it was terminated, when it can be described no more.
 */
export async function askToBeat(
  client: Client,
  keys: LiveTextKeys,
  workflowId: string,
  allowed: readonly LiveWorkerEntry[],
  described?: Described,
): Promise<BeatAsked> {
  const signal = AbortSignal.timeout(beatRequestTimeoutMs);
  try {
    const running =
      described === undefined
        ? await runningAttempt(client, workflowId, signal)
        : pendingModelCall(described);
    // Only a started call has a worker to ask; one still scheduled is cancelled by the server.
    if (running === undefined || !running.started) return 'no-call';
    if (running.url === undefined) return 'no-call';
    if (refusedLiveUrl(allowed, running.url) !== undefined) return 'refused';
    const query = new URLSearchParams({ workflow_id: workflowId }).toString();
    const response = await fetch(`${running.url}/beat?${query}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.sign(workflowId)}` },
      redirect: 'manual',
      signal,
    });
    await response.body?.cancel().catch(() => undefined);
    return response.ok ? 'beaten' : response.status === 404 ? 'no-call' : 'lost';
  } catch {
    return 'lost';
  }
}

/** Asks, without waiting for the answer. */
export type AskToBeat = (workflowId: string, described?: Described) => void;

/**
 * How this API asks for a beat, or undefined on the history channel (its workers beat every
 * second). The token key comes from the encryption keys the API already holds.
 */
export function beatRequester(
  client: Client,
  config: Pick<KeelConfig, 'tokens' | 'encryption'>,
): AskToBeat | undefined {
  if (config.tokens.channel !== 'live') return undefined;
  let keys: Promise<LiveTextKeys> | undefined;
  return (workflowId, described) => {
    keys ??= loadEncryptionKeys(config.encryption).then((loaded) => new LiveTextKeys(loaded));
    // Whatever becomes of it, the call's slow beat carries the cancel in the end.
    void keys
      .then((loaded) => askToBeat(client, loaded, workflowId, config.tokens.liveWorkers, described))
      .catch(() => 'lost');
  };
}
