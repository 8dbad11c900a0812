/**
 * Bearer-token authentication. With no KEEL_API_TOKENS (loopback only) every caller is the local
 * user; with tokens, each token stands for an owner and threads are visible only to their owner.
 */
import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { ApiToken } from '../common/config';
import { ApiError } from './errors';

const publicPaths = new Set(['/healthz', '/readyz', '/openapi.json', '/ok', '/info']);

function matches(candidate: string, token: string): boolean {
  const a = Buffer.from(candidate);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function authenticate(tokens: readonly ApiToken[]): RequestHandler {
  return (request, response, next) => {
    if (tokens.length === 0 || publicPaths.has(request.path)) {
      next();
      return;
    }
    const header = request.header('authorization');
    const presented = header?.startsWith('Bearer ')
      ? header.slice('Bearer '.length).trim()
      : request.header('x-api-key');
    const match =
      presented === undefined ? undefined : tokens.find((token) => matches(presented, token.token));
    if (match === undefined) {
      next(new ApiError(401, 'unauthenticated', 'send a valid token as "Authorization: Bearer <token>"'));
      return;
    }
    response.locals.owner = match.owner;
    next();
  };
}
