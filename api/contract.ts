/**
 * The API's contract, one operation at a time: method, path, parameters, body and every response,
 * as zod schemas. Routes mount through `route`, which validates with those schemas; `/openapi.json`
 * (api/openapi.ts) and the 405 answer's `Allow` are made from the same operations
 * (docs/decisions/0100-one-contract-for-routes-and-openapi.md).
 */
import type { Request, Response, Router } from 'express';
import type { z } from 'zod';
import { ApiError } from './errors';
import { parseBody, parseQuery } from './validate';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** One answer an operation gives: JSON by default, its body described by `schema`. */
export interface ResponseSpec {
  description: string;
  /** The JSON body; omitted only for bodies that are not JSON. */
  schema?: z.ZodType;
  /** Another media type: `text/event-stream` for SSE, `text/markdown` for an export. */
  media?: readonly string[];
}

/** Error statuses an operation may answer, always in the one error shape (api/errors.ts). */
export type ErrorStatus = 400 | 401 | 403 | 404 | 408 | 409 | 410 | 413 | 415 | 421 | 422 | 429 | 503;

export interface Operation<
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
> {
  method: Method;
  /** The path in OpenAPI's spelling, `/threads/{thread_id}`. */
  path: string;
  summary: string;
  /**
   * OpenAPI's `operationId`. @default the method and the path's words, `get_threads_thread_id`
   * (unique, as method and path are).
   */
  operationId?: string;
  /** Path parameters by name, as documented; the route answers 404 for a value the schema refuses. */
  params?: Record<string, z.ZodType>;
  /** Headers the operation reads, documented only (the route reads them). */
  headers?: Record<string, { schema: z.ZodType; description: string }>;
  query?: Q;
  body?: B;
  /** Successful answers by status. */
  responses: Partial<Record<200 | 202 | 204, ResponseSpec>>;
  /**
   * Errors besides those the contract adds itself: those of the API's door (408, 415, 421, 403 on
   * a write), 401 (unless `public`, and only with tokens), 404 with path parameters, 422 with a
   * query or body, 400/413 with a body.
   */
  errors?: readonly ErrorStatus[];
  /** Answered without a token. */
  public?: boolean;
  /** OpenAPI tags; `stream` marks the SSE operations. */
  tags?: readonly string[];
}

/** Any operation, whatever its query and body. */
export type AnyOperation = Operation<z.ZodType | undefined, z.ZodType | undefined>;

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;

/** What `route` hands a handler: the query and body already parsed by the operation's schemas. */
export interface Input<Q, B> {
  query: Parsed<Q>;
  body: Parsed<B>;
}

export type Handler<Q, B> = (
  request: Request,
  response: Response,
  input: Input<Q, B>,
) => Promise<void> | void;

/** Declares an operation (typed, so `route` knows its query and body). */
export function operation<
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(spec: Operation<Q, B>): Operation<Q, B> {
  return spec;
}

/** `/threads/{thread_id}` in Express's spelling, `/threads/:thread_id`. */
export const expressPath = (path: string): string => path.replace(/\{([^}]+)\}/g, ':$1');

/** True when an empty body (or none) is a valid one: then the body is optional. */
export const bodyRequired = (body: z.ZodType): boolean => !body.safeParse({}).success;

/**
 * Mounts `handler` for `operation` on `router`: the query and body are validated by the
 * operation's schemas (422 in the error shape) before the handler runs.
 */
export function route<Q extends z.ZodType | undefined, B extends z.ZodType | undefined>(
  router: Router,
  spec: Operation<Q, B>,
  handler: Handler<Q, B>,
): void {
  router[spec.method](expressPath(spec.path), async (request, response) => {
    const input = {
      query: spec.query === undefined ? undefined : parseQuery(spec.query, request),
      body: spec.body === undefined ? undefined : parseBody(spec.body, request),
    } as Input<Q, B>;
    await handler(request, response, input);
  });
}

interface Template {
  path: string;
  pattern: RegExp;
  /** Per segment, 1 for a literal and 0 for a parameter: literals win (OpenAPI's matching rule). */
  rank: number[];
  methods: string[];
}

const templateCache = new WeakMap<readonly AnyOperation[], Template[]>();

/** Each path of the contract once, with the methods it serves. */
function templates(operations: readonly AnyOperation[]): Template[] {
  let found = templateCache.get(operations);
  if (found === undefined) {
    const byPath = new Map<string, Template>();
    for (const spec of operations) {
      let template = byPath.get(spec.path);
      if (template === undefined) {
        const pattern = spec.path
          .split(/\{[^}]+\}/)
          .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
          .join('[^/]+');
        template = {
          path: spec.path,
          pattern: new RegExp(`^${pattern}/?$`),
          rank: spec.path.split('/').map((segment) => (segment.startsWith('{') ? 0 : 1)),
          methods: [],
        };
        byPath.set(spec.path, template);
      }
      template.methods.push(spec.method.toUpperCase());
    }
    found = [...byPath.values()];
    templateCache.set(operations, found);
  }
  return found;
}

const methodOrder = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

const outranks = (a: number[], b: number[]): boolean => {
  for (let index = 0; index < a.length; index++) {
    if ((a[index] ?? 0) !== (b[index] ?? 0)) return (a[index] ?? 0) > (b[index] ?? 0);
  }
  return false;
};

/**
 * The methods the contract serves on a request path: those of the path template that owns it
 * (a literal segment beats a parameter, so `/threads/search` is not a thread). GET brings HEAD,
 * as Express answers it; OPTIONS is answered here. Empty for a path the contract does not know.
 */
export function allowedMethods(operations: readonly AnyOperation[], path: string): string[] {
  let owner: Template | undefined;
  for (const template of templates(operations))
    if (template.pattern.test(path) && (owner === undefined || outranks(template.rank, owner.rank)))
      owner = template;
  if (owner === undefined) return [];
  const methods = new Set(owner.methods);
  if (methods.has('GET')) methods.add('HEAD');
  methods.add('OPTIONS');
  return methodOrder.filter((method) => methods.has(method));
}

/**
 * Before the routes: a known path asked with a method it does not serve answers 405 with
 * `Allow` (OPTIONS answers 204 with it); anything else goes on to the routes.
 */
export function methodGate(operations: readonly AnyOperation[]) {
  return (request: Request, response: Response, next: (error?: unknown) => void): void => {
    const allowed = allowedMethods(operations, request.path);
    if (allowed.length === 0 || (request.method !== 'OPTIONS' && allowed.includes(request.method))) {
      next();
      return;
    }
    response.setHeader('Allow', allowed.join(', '));
    if (request.method === 'OPTIONS') {
      response.status(204).end();
      return;
    }
    const methods = allowed.filter((method) => method !== 'HEAD' && method !== 'OPTIONS');
    next(
      new ApiError(
        405,
        'method_not_allowed',
        `${request.method} is not allowed on ${request.path}; use ${methods.join(' or ')}`,
      ),
    );
  };
}
