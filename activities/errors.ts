/** Errors raised inside activities before they become Temporal failures. */
import { ApplicationFailure } from '@temporalio/common';
import type { FailureType } from '../common/failures';
import { KeelError } from '../common/errors';

/** A path or symlink that would leave the conversation's workspace. */
export class WorkspaceViolation extends KeelError {
  override readonly name = 'WorkspaceViolation';
  constructor(
    readonly requested: string,
    reason: string,
  ) {
    super(`path "${requested}" ${reason}; tools only reach files inside the conversation's workspace`);
  }
}

/** A file tool refusing a path inside the workspace (missing, not a regular file, too large). */
export class FileRefused extends KeelError {
  override readonly name = 'FileRefused';
  constructor(
    /** Workspace-relative: a refusal never shows a host path. */
    readonly requested: string,
    reason: string,
  ) {
    super(`${requested} ${reason}`);
  }
}

export interface FailureOptions {
  nonRetryable?: boolean;
  /** Overrides the retry policy's interval for the next attempt (from `retry-after`). */
  nextRetryDelayMs?: number;
  cause?: unknown;
  /** Structured facts for whoever catches the failure, so it need not read the message. */
  details?: unknown[];
}

/**
 * The shortest next-retry delay a failure asks for. An explicit zero ended the retries (seen: a
 * 529 with `retry-after: 0` failed the run at its first attempt), so "retry now" becomes this.
 */
export const minimumRetryDelayMs = 100;

/** The one way activities fail across the Temporal boundary: typed, with retry intent. */
export function failure(
  type: FailureType,
  message: string,
  options: FailureOptions = {},
): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: options.nonRetryable ?? false,
    ...(options.nextRetryDelayMs === undefined
      ? {}
      : { nextRetryDelay: Math.max(minimumRetryDelayMs, options.nextRetryDelayMs) }),
    ...(options.cause instanceof Error ? { cause: options.cause } : {}),
    ...(options.details === undefined ? {} : { details: options.details }),
  });
}
