/**
 * Maps an HTTP status from an OpenAI-compatible or Ollama server to a typed failure with retry
 * intent, the same policy as `anthropic-errors.ts`: 429 (honouring `retry-after`), 408, 409 and
 * 5xx retry; 401/403 and every other 4xx, and quota errors, do not.
 */
import { ApplicationFailure } from '@temporalio/common';
import { failure } from '../errors';
import { retryAfterMs } from './anthropic-errors';

export interface ProviderLabel {
  /** How the message names the server: `OpenAI-compatible server`, `Ollama`. */
  name: string;
  /** What the user should check on a 401: `OPENAI_API_KEY`. */
  keyHint: string;
}

const quotaPattern = /insufficient_quota|exceeded your current quota|spend limit|billing|credit balance/i;

/**
 * A server's answer that it cannot take tool definitions for this model. Servers give it no code,
 * so its wording is read here, once, where the answer arrives; the failure then carries
 * `toolsUnsupported` in its details for the caller to test.
 */
const toolsUnsupportedPattern =
  /does not support tools|tools? (?:are |is )?not supported|does not support (?:function|tool) calling|tool(?:_choice| use| calling)? (?:is )?unsupported/i;

/** The detail a `ModelRequestInvalid` failure carries when the model cannot take tools. */
export const toolsUnsupported = { reason: 'tools_unsupported' } as const;

/** Whether `error` is the failure of a request refused because the model cannot take tools. */
export function isToolsUnsupported(error: unknown): boolean {
  if (!(error instanceof ApplicationFailure) || error.type !== 'ModelRequestInvalid') return false;
  return (error.details ?? []).some(
    (detail) => (detail as { reason?: unknown } | null)?.reason === toolsUnsupported.reason,
  );
}

export function mapHttpFailure(
  label: ProviderLabel,
  status: number,
  message: string,
  headers: Headers | undefined,
): ApplicationFailure {
  const nextRetryDelayMs = retryAfterMs(headers);
  const retryAfter = nextRetryDelayMs === undefined ? {} : { nextRetryDelayMs };
  if (status === 401 || status === 403) {
    return failure(
      'ModelAuthenticationFailed',
      `${label.name} rejected the credentials (${status}): check ${label.keyHint}. ${message}`,
      { nonRetryable: true },
    );
  }
  if ((status === 429 || status === 402) && (status === 402 || quotaPattern.test(message))) {
    return failure('ModelSpendLimitReached', `${label.name} quota or spend limit reached: ${message}`, {
      nonRetryable: true,
    });
  }
  if (status === 429)
    return failure('ModelRateLimited', `${label.name} rate limit (429): ${message}`, retryAfter);
  if (status === 529 || status === 503)
    return failure('ModelOverloaded', `${label.name} is overloaded (${status}): ${message}`, retryAfter);
  if (status === 408 || status === 409 || status >= 500)
    return failure('ModelUnavailable', `${label.name} error (${status}): ${message}`, retryAfter);
  return failure('ModelRequestInvalid', `${label.name} rejected the request (${status}): ${message}`, {
    nonRetryable: true,
    ...(toolsUnsupportedPattern.test(message) ? { details: [toolsUnsupported] } : {}),
  });
}

export function connectionFailure(label: ProviderLabel, target: string, error: unknown): ApplicationFailure {
  const detail = error instanceof Error ? error.message : String(error);
  return failure('ModelConnectionError', `could not reach ${label.name} at ${target}: ${detail}`, {
    cause: error,
  });
}

export function stallFailure(label: ProviderLabel, timeoutMs: number): ApplicationFailure {
  return failure('ModelStreamStalled', `no data from ${label.name} for ${timeoutMs / 1000} s; retrying`);
}
