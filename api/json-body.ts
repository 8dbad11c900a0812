/**
 * Request bodies are JSON only when they say `application/json` (decision 0310). A browser sends
 * `text/plain`, a form's types or an untyped body to any site without asking first; only JSON
 * needs a preflight, which CORS answers. So a body of any other type is refused with 415 before
 * it is read, and a request without a body (no content-type, nothing to read) is an empty one,
 * as LangGraph's SDKs send a cancel or a copy.
 */
import type { IncomingHttpHeaders } from 'node:http';
import express, { type RequestHandler } from 'express';
import { ApiError } from './errors';

/** Nesting deeper than this is refused at the door (400 `json_too_deep`): nothing Keel reads nests so. */
export const maxJsonDepth = 64;

/** `application/json` or a `+json` type, with any parameters (`; charset=utf-8`). */
const jsonType = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;

/** True when the request carries bytes to read (a length above 0, or a chunked body). */
function carriesBody(headers: IncomingHttpHeaders): boolean {
  if (headers['transfer-encoding'] !== undefined) return true;
  const length = headers['content-length'];
  return length !== undefined && length.trim() !== '0';
}

/** 415 for a body, or a declared type, that is not JSON. */
export function requireJsonBodies(): RequestHandler {
  return (request, _response, next) => {
    const type = request.headers['content-type'];
    if (type === undefined ? !carriesBody(request.headers) : jsonType.test(type)) {
      next();
      return;
    }
    const shown = type === undefined ? 'none' : type.length > 100 ? `${type.slice(0, 100)}…` : type;
    next(
      new ApiError(
        415,
        'unsupported_media_type',
        `request bodies must be JSON sent as "content-type: application/json" (this one's content-type: ${shown})`,
      ),
    );
  };
}

/** How deep `value` nests objects and arrays, counting no further than `limit + 1`. */
export function nestingDepth(value: unknown, limit: number): number {
  let deepest = 0;
  // Iterative: a body nested thousands deep must not overflow the stack here.
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (typeof current !== 'object' || current === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > limit) return deepest;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/** Parses JSON bodies up to `limit` bytes and `maxJsonDepth` levels. */
export function jsonBodies(limit: number): RequestHandler[] {
  return [
    express.json({ limit, type: (request) => jsonType.test(request.headers['content-type'] ?? '') }),
    (request, _response, next) => {
      if (nestingDepth(request.body, maxJsonDepth) > maxJsonDepth)
        next(
          new ApiError(
            400,
            'json_too_deep',
            `the request body nests objects and arrays more than ${maxJsonDepth} levels deep`,
          ),
        );
      else next();
    },
  ];
}
