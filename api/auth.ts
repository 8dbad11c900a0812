/**
 * Bearer-token authentication. With no KEEL_API_TOKENS (loopback only) every caller is the local
 * user; with tokens, each token stands for an owner and threads are visible only to their owner.
 * Tokens are compared as SHA-256 digests in constant time, each one every time, so neither a
 * token's length nor its place in the list shows in the timing; an empty key never matches.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { ApiToken } from '../platform/config';
import { ApiError } from './errors';

// The default agent's A2A card: discovery reads it before it has a token (decision 0445).
const publicPaths = new Set([
  '/healthz',
  '/readyz',
  '/openapi.json',
  '/ok',
  '/info',
  '/.well-known/agent-card.json',
]);

const digest = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** The owner whose token `presented` is, comparing against every token whatever matches. */
function ownerOf(presented: string | undefined, tokens: readonly { owner: string; digest: Buffer }[]) {
  if (presented === undefined || presented === '') return undefined;
  const candidate = digest(presented);
  let owner: string | undefined;
  for (const token of tokens) if (timingSafeEqual(candidate, token.digest)) owner ??= token.owner;
  return owner;
}

export function authenticate(configured: readonly ApiToken[]): RequestHandler {
  const tokens = configured
    .filter(({ token }) => token !== '')
    .map(({ owner, token }) => ({ owner, digest: digest(token) }));
  return (request, response, next) => {
    // No tokens configured is the loopback-only mode; the configuration refuses a list that
    // names none, so an unusable list never lands here.
    if (configured.length === 0 || publicPaths.has(request.path)) {
      next();
      return;
    }
    const header = request.header('authorization');
    const presented = header?.startsWith('Bearer ')
      ? header.slice('Bearer '.length).trim()
      : request.header('x-api-key')?.trim();
    const owner = ownerOf(presented, tokens);
    if (owner === undefined) {
      next(
        new ApiError(
          401,
          'unauthenticated',
          'send a valid token as "Authorization: Bearer <token>" or "x-api-key: <token>"',
        ),
      );
      return;
    }
    response.locals.owner = owner;
    next();
  };
}
