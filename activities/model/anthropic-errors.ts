/**
 * Maps what the Anthropic SDK throws to typed failures with retry intent: 408/409/429/5xx/529,
 * connection errors and a mid-stream `overloaded_error` retry (honouring `retry-after`); other
 * 4xx and spend limits do not.
 */
import Anthropic, { type APIError } from '@anthropic-ai/sdk';
import type { ApplicationFailure } from '@temporalio/common';
import { failure } from '../errors';

/** Parses `retry-after-ms`, or `retry-after` as seconds or an HTTP date, into milliseconds. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const milliseconds = headers?.get('retry-after-ms');
  if (milliseconds !== null && milliseconds !== undefined && Number.isFinite(Number(milliseconds)))
    return Math.max(0, Number(milliseconds));
  const value = headers?.get('retry-after');
  if (value === null || value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const spendLimitPattern = /spend limit|credit balance|billing|quota/i;

export function mapAnthropicError(error: unknown): ApplicationFailure | undefined {
  if (error instanceof Anthropic.APIConnectionError) {
    return failure('ModelConnectionError', `could not reach the Anthropic API: ${error.message}`, {
      cause: error,
    });
  }
  if (!(error instanceof Anthropic.APIError)) return undefined;
  const apiError = error as APIError;
  const apiMessage = apiError.apiMessage ?? apiError.message;
  const status = apiError.status;
  if (status === undefined) {
    // An `event: error` in the middle of a stream.
    if (apiError.type === 'overloaded_error')
      return failure('ModelOverloaded', `Anthropic is overloaded: ${apiMessage}`);
    if (apiError.type === 'rate_limit_error')
      return failure('ModelRateLimited', `rate limited mid-stream: ${apiMessage}`);
    if (apiError.type === 'invalid_request_error')
      return failure('ModelRequestInvalid', apiMessage, { nonRetryable: true });
    return failure('ModelUnavailable', `the stream failed: ${apiMessage}`);
  }
  const nextRetryDelayMs = retryAfterMs(apiError.headers);
  const retryAfter = nextRetryDelayMs === undefined ? {} : { nextRetryDelayMs };
  if (status === 401) {
    return failure(
      'ModelAuthenticationFailed',
      `Anthropic rejected the API key (401): check ANTHROPIC_API_KEY. ${apiMessage}`,
      { nonRetryable: true },
    );
  }
  if (status === 429 || status === 402) {
    if (status === 402 || spendLimitPattern.test(apiMessage)) {
      return failure('ModelSpendLimitReached', `Anthropic spend limit reached: ${apiMessage}`, {
        nonRetryable: true,
      });
    }
    return failure('ModelRateLimited', `Anthropic rate limit (429): ${apiMessage}`, retryAfter);
  }
  if (status === 529)
    return failure('ModelOverloaded', `Anthropic is overloaded (529): ${apiMessage}`, retryAfter);
  if (status === 408 || status === 409 || status >= 500) {
    return failure('ModelUnavailable', `Anthropic API error (${status}): ${apiMessage}`, retryAfter);
  }
  if (status === 400 && spendLimitPattern.test(apiMessage)) {
    return failure('ModelSpendLimitReached', `Anthropic spend limit reached: ${apiMessage}`, {
      nonRetryable: true,
    });
  }
  return failure('ModelRequestInvalid', `Anthropic rejected the request (${status}): ${apiMessage}`, {
    nonRetryable: true,
  });
}
