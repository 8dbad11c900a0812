/**
 * A failed call to Keel's HTTP API, as its clients see it: one class per status family, made
 * from the answer's status and body (Keel's error shape, `{"error": {type, code, message,
 * param?}, "detail": message}`). The `keel` CLI and the web chat both read errors through it, so
 * the body is parsed in one place.
 *
 * No Node API and no DOM here: the CLI (Node) and the web page (its own Vite build) import it.
 * Each class declares `errorName` because the web bundle is minified (see `KeelError`).
 */
import { KeelError } from './errors';

/** What the answer said, parsed once. */
interface Parsed {
  message: string;
  code?: string;
  type?: string;
  param?: string;
}

/** A call to the API that failed: refused with a status, or never answered (`status` undefined). */
export class ApiCallError extends KeelError {
  static readonly errorName: string = 'ApiCallError';
  override readonly name: string = 'ApiCallError';
  /** The API's own sentence (the body's message), without the status: what a page shows. */
  readonly detail: string;
  /** The body's `error.type` (`not_found_error` …), when it had one. */
  readonly type: string | undefined;
  /** The request field the error names, when it names one. */
  readonly param: string | undefined;

  constructor(
    /** Says the status and code after the API's sentence, when there are any (what a terminal shows). */
    message: string,
    readonly status?: number,
    /** Keel's error code (`thread_not_found`, `quota_exceeded` …), when the body had one. */
    readonly code?: string,
    options: { detail?: string; type?: string; param?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.detail = options.detail ?? message;
    this.type = options.type;
    this.param = options.param;
  }
}

/** 400: the request could not be read. */
export class BadRequestError extends ApiCallError {
  static override readonly errorName = 'BadRequestError';
}
/** 401: no token, or one the API does not know. */
export class AuthenticationError extends ApiCallError {
  static override readonly errorName = 'AuthenticationError';
}
/** 403: the token may not do this. */
export class PermissionDeniedError extends ApiCallError {
  static override readonly errorName = 'PermissionDeniedError';
}
/** 404: no such thread, run or approval (or it is another owner's). */
export class NotFoundError extends ApiCallError {
  static override readonly errorName = 'NotFoundError';
}
/** 409: the thread is busy or closed, or the id is taken. */
export class ConflictError extends ApiCallError {
  static override readonly errorName = 'ConflictError';
}
/** 410: the stream's events after the cursor were truncated away (`stream_cursor_expired`). */
export class GoneError extends ApiCallError {
  static override readonly errorName = 'GoneError';
}
/** 422: the body is well-formed but invalid; `param` names the field. */
export class UnprocessableEntityError extends ApiCallError {
  static override readonly errorName = 'UnprocessableEntityError';
}
/** 429: a quota or a concurrency limit; the code says which. */
export class RateLimitError extends ApiCallError {
  static override readonly errorName = 'RateLimitError';
}
/** 5xx: the API, Temporal or a worker failed; 503 means come back shortly, nothing was lost. */
export class InternalServerError extends ApiCallError {
  static override readonly errorName = 'InternalServerError';
}
/** No answer at all: the API is not running, or the connection broke. */
export class ApiConnectionError extends ApiCallError {
  static override readonly errorName = 'ApiConnectionError';
}

const byStatus: Record<number, typeof ApiCallError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  410: GoneError,
  422: UnprocessableEntityError,
  429: RateLimitError,
};

const textOf = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * The body in Keel's error shape, or in the plainer `{"error": code, "message"}` some answers
 * use; anything else (a proxy's page) says only the status line.
 */
function parse(status: number, statusText: string, text: string): Parsed {
  const statusLine = statusText === '' ? `the API answered ${status}` : `${status} ${statusText}`;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { message: statusLine };
  }
  if (typeof body !== 'object' || body === null) return { message: statusLine };
  const { error, message, detail } = body as Record<string, unknown>;
  if (typeof error === 'object' && error !== null) {
    const fields = error as Record<string, unknown>;
    const parsed: Parsed = { message: textOf(fields.message) ?? textOf(detail) ?? statusLine };
    const [code, type, param] = [textOf(fields.code), textOf(fields.type), textOf(fields.param)];
    if (code !== undefined) parsed.code = code;
    if (type !== undefined) parsed.type = type;
    if (param !== undefined) parsed.param = param;
    return parsed;
  }
  const parsed: Parsed = { message: textOf(message) ?? textOf(detail) ?? statusLine };
  const code = textOf(error);
  if (code !== undefined) parsed.code = code;
  return parsed;
}

/**
 * The error for an answer that was not ok: the class of its status family, its message the API's
 * sentence followed by `(HTTP <status> <code>)`, its `detail` the sentence alone.
 */
export function apiCallErrorOf(answer: { status: number; statusText?: string; text: string }): ApiCallError {
  const parsed = parse(answer.status, answer.statusText ?? '', answer.text);
  const family = byStatus[answer.status] ?? (answer.status >= 500 ? InternalServerError : ApiCallError);
  return new family(
    `${parsed.message} (HTTP ${answer.status}${parsed.code === undefined ? '' : ` ${parsed.code}`})`,
    answer.status,
    parsed.code,
    {
      detail: parsed.message,
      ...(parsed.type === undefined ? {} : { type: parsed.type }),
      ...(parsed.param === undefined ? {} : { param: parsed.param }),
    },
  );
}
