/**
 * The API's one error shape, `{"error": {type, code, message, param?}, "detail": message}`, and
 * the single mapping from Temporal's errors to it. Never a stack trace; never a 500 for bad input.
 */
import {
  ServiceError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowUpdateFailedError,
  isGrpcServiceError,
} from '@temporalio/client';
import { ApplicationFailure, NamespaceNotFoundError, WorkflowNotFoundError } from '@temporalio/common';
import { status as grpcStatus } from '@grpc/grpc-js';
import type { ErrorRequestHandler } from 'express';
import type { Logger } from 'pino';
import type { ZodError } from 'zod';
import { PayloadDecryptionError } from '../codec/errors';
import { threadIdOf } from '../common/thread';
import { StoreError } from '../store/errors';
import { KeelError } from '../common/errors';

const typesByStatus: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  408: 'invalid_request_error',
  409: 'conflict_error',
  410: 'gone_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  421: 'invalid_request_error',
  422: 'invalid_request_error',
  429: 'rate_limit_error',
  503: 'service_unavailable_error',
};

export class ApiError extends KeelError {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param?: string,
    /** Seconds the caller should wait before retrying, sent as `Retry-After` (a 429's). */
    readonly retryAfterS?: number,
  ) {
    super(message);
  }

  body(): { error: { type: string; code: string; message: string; param?: string }; detail: string } {
    return {
      error: {
        type: typesByStatus[this.status] ?? 'api_error',
        code: this.code,
        message: this.message,
        ...(this.param === undefined ? {} : { param: this.param }),
      },
      detail: this.message,
    };
  }
}

/** 404 for a thread that does not exist (or is another owner's), naming it. */
export function threadNotFound(threadId: string | undefined): ApiError {
  const shown =
    threadId === undefined ? '' : ` ${threadId.length > 100 ? `${threadId.slice(0, 100)}…` : threadId}`;
  return new ApiError(404, 'thread_not_found', `thread${shown} not found`);
}

/** 409 for a thread id the caller already holds (with tokens, ids are per owner: decision 0160). */
export const threadExists = (): ApiError =>
  new ApiError(409, 'thread_exists', 'a thread with this id already exists');

/** 422 naming the field; a schema's own check may name a more precise code (`params.code`). */
export function validationError(error: ZodError, where: 'body' | 'query'): ApiError {
  const issue = error.issues[0];
  const param = issue?.path.join('.') ?? '';
  const message = error.issues.map((i) => `${[where, ...i.path].join('.')}: ${i.message}`).join('; ');
  const own = issue?.code === 'custom' ? (issue.params as { code?: unknown } | undefined)?.code : undefined;
  return new ApiError(
    422,
    typeof own === 'string' ? own : 'validation_error',
    message,
    param === '' ? undefined : param,
  );
}

/** What an update validator's failure type means over HTTP. */
const rejections: Record<string, [number, string]> = {
  ThreadBusy: [409, 'thread_busy'],
  ThreadClosed: [409, 'thread_closed'],
  RunExists: [409, 'run_exists'],
  InvalidInput: [422, 'invalid_input'],
  RunNotFound: [404, 'run_not_found'],
  CheckpointNotFound: [404, 'checkpoint_not_found'],
  ApprovalNotPending: [409, 'approval_not_pending'],
  ApprovalNotFound: [404, 'approval_not_found'],
  VersionNotFound: [404, 'version_not_found'],
  RunActive: [409, 'run_active'],
};

const unavailableCodes = new Set<number>([grpcStatus.DEADLINE_EXCEEDED, grpcStatus.UNAVAILABLE]);
/** What a 503 tells the caller to wait before retrying, in seconds. */
export const retryAfterS = 2;

/** The decryption failure behind `error` (the SDK may wrap it), if there is one. */
function decryptionFailure(error: unknown): PayloadDecryptionError | undefined {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++)
    if (cause instanceof PayloadDecryptionError) return cause;
  return undefined;
}

/** The SDK's namespace-not-found error, wherever it sits in the causes. */
function namespaceNotFound(error: unknown): boolean {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++)
    if (cause instanceof NamespaceNotFoundError) return true;
  return false;
}

/** Maps anything thrown while talking to Temporal to an ApiError, or returns undefined. */
export function fromTemporal(error: unknown): ApiError | undefined {
  if (error instanceof ApiError) return error;
  if (error instanceof StoreError) return new ApiError(error.status, error.code, error.message, error.param);
  // The thread's data is encrypted with a key this API does not hold: an operator's problem,
  // named plainly; other threads are unaffected.
  const undecryptable = decryptionFailure(error);
  if (undecryptable !== undefined) return new ApiError(500, 'thread_undecryptable', undecryptable.message);
  // Keel's namespace not served: a dev server whose store is broken says so of every call (its
  // namespace registry unreadable), as does a cluster the namespace was never registered on.
  // Temporal, not the request, is at fault, and neither says anything of the thread.
  if (namespaceNotFound(error))
    return new ApiError(
      503,
      'temporal_unavailable',
      'Temporal is unavailable (it does not serve this namespace); retry shortly',
    );
  if (error instanceof WorkflowNotFoundError) return threadNotFound(threadIdOf(error.workflowId ?? ''));
  if (error instanceof WorkflowExecutionAlreadyStartedError) return threadExists();
  if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
    const mapped = rejections[error.cause.type ?? ''];
    if (mapped !== undefined) return new ApiError(mapped[0], mapped[1], error.cause.message);
  }
  // A closed thread is not a gRPC status of its own: Temporal answers NOT_FOUND ("already
  // completed"), which the SDK raises as WorkflowNotFoundError, above.
  const grpc = error instanceof ServiceError ? error.cause : error;
  if (isGrpcServiceError(grpc) && unavailableCodes.has(grpc.code))
    return new ApiError(503, 'temporal_unavailable', 'Temporal is unavailable; retry shortly');
  return undefined;
}

interface BodyParserError {
  type?: string;
  status?: number;
  limit?: number;
}

export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (error: unknown, request, response, next) => {
    if (response.headersSent) {
      next(error);
      return;
    }
    const parser = error as BodyParserError;
    let apiError: ApiError | undefined;
    if (parser.type === 'entity.parse.failed')
      apiError = new ApiError(
        400,
        'invalid_json',
        `the request body is not valid JSON${request.headers['content-type'] === undefined ? '' : ` (content-type: ${request.headers['content-type']})`}; send a JSON object`,
      );
    else if (parser.type === 'entity.too.large') {
      apiError = new ApiError(
        413,
        'payload_too_large',
        `the request body exceeds ${parser.limit ?? 'the limit of'} bytes`,
      );
    } else if (parser.type === 'encoding.unsupported' || parser.type === 'charset.unsupported') {
      apiError = new ApiError(415, 'unsupported_encoding', 'the request body encoding is not supported');
    } else apiError = fromTemporal(error);
    if (apiError === undefined) {
      logger.error({ err: error, method: request.method, path: request.path }, 'request failed');
      apiError = new ApiError(500, 'internal_error', 'internal error');
    }
    // Nothing was lost: the caller should come back (the worker or Temporal is on its way back).
    if (apiError.status === 503) response.setHeader('Retry-After', String(retryAfterS));
    if (apiError.retryAfterS !== undefined) response.setHeader('Retry-After', String(apiError.retryAfterS));
    response.status(apiError.status).json(apiError.body());
  };
}
