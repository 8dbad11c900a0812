/**
 * `sendWebhook`: one POST of a run's webhook, signed with Standard Webhooks headers
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`). A non-2xx answer or a network error
 * fails the attempt and Temporal retries it with backoff; every attempt carries the same
 * `webhook-id`, so a receiver that saw it already can drop the repeat. The URL is checked again
 * here (./outbound-address.ts), also at connect time; redirects are never followed.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { log } from '@temporalio/activity';
import { Webhook } from 'standardwebhooks';
import type { SendWebhookInput } from '../common/activities';
import { innermostMessage, urlForLogs } from '../common/urls';
import { failure } from './errors';
import { checkOutboundUrl, guardedLookup, RefusedUrl, UnresolvedHost } from '../platform/outbound-address';

/** One attempt may take this long before it is abandoned and retried. */
const attemptTimeoutMs = 10_000;

export interface SendWebhookDependencies {
  /** `whsec_…` (base64); undefined sends webhooks without a signature. */
  secret: string | undefined;
  /** Hosts reached even at loopback, private or link-local addresses. */
  allowHosts: readonly string[];
}

function post(url: URL, headers: Record<string, string>, body: string, allowHosts: readonly string[]) {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<IncomingMessage>((resolve, reject) => {
    const outgoing = request(url, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      lookup: guardedLookup(allowHosts),
      timeout: attemptTimeoutMs,
    });
    outgoing.on('timeout', () =>
      outgoing.destroy(new Error(`no answer within ${attemptTimeoutMs / 1000} s`)),
    );
    outgoing.on('error', reject);
    outgoing.on('response', (response) => {
      response.resume();
      resolve(response);
    });
    outgoing.end(body);
  });
}

export function createSendWebhook({ secret, allowHosts }: SendWebhookDependencies) {
  const signer = secret === undefined ? undefined : new Webhook(secret);
  return async function sendWebhook(input: SendWebhookInput): Promise<void> {
    const shown = urlForLogs(input.url);
    const refuse = (why: string, cause?: unknown) => {
      log.warn('webhook refused', { url: shown, reason: why });
      return failure('WebhookRefused', `webhook ${shown} refused: ${why}`, { nonRetryable: true, cause });
    };
    try {
      await checkOutboundUrl(input.url, allowHosts);
    } catch (error) {
      // A name that does not resolve may yet: retried, as an unreachable host is.
      if (error instanceof UnresolvedHost)
        throw failure('WebhookDeliveryFailed', `webhook ${shown} unreachable: ${error.message}`, {
          cause: error,
        });
      throw refuse(error instanceof Error ? error.message : String(error), error);
    }
    const body = JSON.stringify(input.payload);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'keel-webhooks',
      ...input.headers,
      'webhook-id': input.webhook_id,
      'webhook-timestamp': String(input.timestamp),
    };
    if (signer !== undefined)
      headers['webhook-signature'] = signer.sign(input.webhook_id, new Date(input.timestamp * 1000), body);
    let response: IncomingMessage;
    try {
      response = await post(new URL(input.url), headers, body, allowHosts);
    } catch (error) {
      if (error instanceof RefusedUrl) throw refuse(error.message, error);
      // Read structurally: a network error may come from another realm than our Error.
      const why = innermostMessage(error).split(input.url).join(shown);
      log.warn('webhook delivery failed', { url: shown, reason: why });
      throw failure('WebhookDeliveryFailed', `webhook ${shown} unreachable: ${why}`, { cause: error });
    }
    const status = response.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      const text =
        response.statusMessage === undefined || response.statusMessage === ''
          ? ''
          : ` ${response.statusMessage}`;
      const why =
        status >= 300 && status < 400
          ? `answered ${status}${text} (redirects are not followed)`
          : `answered ${status}${text}`;
      log.warn('webhook delivery failed', { url: shown, reason: why });
      throw failure('WebhookDeliveryFailed', `webhook ${shown} ${why}`);
    }
  };
}
