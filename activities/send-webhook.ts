/**
 * `sendWebhook`: one POST of a run's webhook, signed with Standard Webhooks headers
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`). A non-2xx answer or a network error
 * fails the attempt and Temporal retries it with backoff; every attempt carries the same
 * `webhook-id`, so a receiver that saw it already can drop the repeat.
 */
import { Webhook } from 'standardwebhooks';
import type { SendWebhookInput } from '../common/activities';
import { innermostMessage, urlForLogs } from '../common/urls';
import { failure } from './errors';

/** One attempt may take this long before it is abandoned and retried. */
const attemptTimeoutMs = 10_000;

export interface SendWebhookDependencies {
  /** `whsec_…` (base64); undefined sends webhooks without a signature. */
  secret: string | undefined;
}

export function createSendWebhook({ secret }: SendWebhookDependencies) {
  const signer = secret === undefined ? undefined : new Webhook(secret);
  return async function sendWebhook(input: SendWebhookInput): Promise<void> {
    const body = JSON.stringify(input.payload);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'keel-webhooks',
      'webhook-id': input.webhook_id,
      'webhook-timestamp': String(input.timestamp),
    };
    if (signer !== undefined)
      headers['webhook-signature'] = signer.sign(input.webhook_id, new Date(input.timestamp * 1000), body);
    const shown = urlForLogs(input.url);
    let response: Response;
    try {
      response = await fetch(input.url, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.timeout(attemptTimeoutMs),
        redirect: 'manual',
      });
    } catch (error) {
      // The cause (undici's) does not survive serialization: its reason goes into the message,
      // without the URL's secrets (fetch quotes a URL it refuses).
      const reason = reasonOf(error).split(input.url).join(shown);
      throw failure('WebhookDeliveryFailed', `webhook ${shown} unreachable: ${reason}`);
    }
    await response.body?.cancel();
    if (response.status < 200 || response.status >= 300)
      throw failure(
        'WebhookDeliveryFailed',
        `webhook ${shown} answered ${response.status}${response.statusText === '' ? '' : ` ${response.statusText}`}`,
      );
  };
}

/** Why a fetch failed, in words: a timeout, or the network error under "fetch failed". */
function reasonOf(error: unknown): string {
  if (error instanceof DOMException && error.name === 'TimeoutError')
    return `no answer within ${attemptTimeoutMs / 1000} s`;
  const { cause } = error as { cause?: { code?: string } };
  const message = innermostMessage(error);
  return cause?.code !== undefined && !message.includes(cause.code) ? `${message} (${cause.code})` : message;
}
