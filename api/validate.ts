/** Request validation and per-request context, shared by every route. */
import type { Request, Response } from 'express';
import type { z } from 'zod';
import { idPattern, limits } from '../common/limits';
import { ApiError, threadNotFound, validationError } from './errors';

export function parseBody<S extends z.ZodType>(schema: S, request: Request): z.infer<S> {
  const result = schema.safeParse(request.body ?? {});
  if (!result.success) throw validationError(result.error, 'body');
  return result.data;
}

export function parseQuery<S extends z.ZodType>(schema: S, request: Request): z.infer<S> {
  const result = schema.safeParse(request.query);
  if (!result.success) throw validationError(result.error, 'query');
  return result.data;
}

/** A path id that cannot name anything answers 404, like any other unknown id. */
export function pathId(request: Request, name: 'thread_id' | 'run_id'): string {
  const value = request.params[name];
  if (typeof value !== 'string' || value.length > limits.maxIdChars || !idPattern.test(value)) {
    const shown = String(value).length > 100 ? `${String(value).slice(0, 100)}…` : String(value);
    if (name === 'thread_id') throw threadNotFound(String(value));
    throw new ApiError(404, 'run_not_found', `run ${shown} not found`);
  }
  return value;
}

/** The authenticated owner, set by the auth middleware (undefined when the API has no tokens). */
export function ownerOf(response: Response): string | undefined {
  return response.locals.owner as string | undefined;
}

/** Aborts when the client goes away before the response is sent. */
export function clientGone(request: Request, response: Response): AbortSignal {
  const controller = new AbortController();
  response.on('close', () => {
    if (!response.writableFinished) controller.abort();
  });
  void request;
  return controller.signal;
}
