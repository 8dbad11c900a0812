/**
 * Keel's web chat, served at `/` from its committed production build (`web/dist`, built from
 * `web/src`; docs/decisions/0110-web-chat-build-committed.md). Mounted before authentication:
 * the page itself is public, and it sends the person's token with every API call it makes.
 */
import path from 'node:path';
import express, { Router } from 'express';
import { packageRoot } from '../platform/package-root';
import { operation, route } from './contract';
import { ApiError } from './errors';

export const webDist = path.join(packageRoot, 'web', 'dist');

/**
 * The page may talk to the API that served it and to nothing else: everything it needs (code,
 * styles, fonts) is in the build, so no request ever leaves for another host.
 */
const contentSecurityPolicy = [
  "default-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "style-src 'self'",
  "script-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const webPage = operation({
  method: 'get',
  path: '/',
  summary: "Keel's web chat (its scripts and styles are under /assets)",
  public: true,
  responses: { 200: { description: 'The page', media: ['text/html'] } },
  errors: [503],
});

export function webPageRoutes(dist = webDist): Router {
  const router = Router();
  route(router, webPage, async (_request, response) => {
    response.setHeader('Content-Security-Policy', contentSecurityPolicy);
    response.setHeader('Cache-Control', 'no-cache');
    await new Promise<void>((resolve, reject) =>
      response.sendFile(path.join(dist, 'index.html'), (error) => {
        if (error === undefined || response.headersSent) resolve();
        else
          reject(
            new ApiError(503, 'web_page_not_built', 'the web chat is not built: run `npm run build:web`'),
          );
      }),
    );
  });
  // File names carry their content's hash: a browser may keep them for good.
  router.use('/assets', express.static(path.join(dist, 'assets'), { immutable: true, maxAge: '365d' }));
  return router;
}
