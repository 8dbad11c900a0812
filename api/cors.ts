/**
 * CORS, so browser apps (LangGraph's chat UIs, `useStream`) can call the API: allowed origins
 * get the headers, and preflights are answered here, before authentication (browsers send no
 * credentials on a preflight). Content-Location is exposed: the SDK reads the run id from it.
 */
import type { RequestHandler } from 'express';

const allowedMethods = 'GET, POST, PUT, PATCH, DELETE, OPTIONS';
const exposedHeaders = 'Content-Location, Location, X-Pagination-Total, X-Pagination-Next';

/** `origins`: the allowed origins, `*` for any; empty turns CORS off. */
export function cors(origins: readonly string[]): RequestHandler {
  const any = origins.includes('*');
  return (request, response, next) => {
    const origin = request.header('origin');
    const allowed = origin !== undefined && (any || origins.includes(origin));
    if (allowed) {
      response.setHeader('Access-Control-Allow-Origin', any ? '*' : origin);
      if (!any) response.vary('Origin');
      response.setHeader('Access-Control-Expose-Headers', exposedHeaders);
    }
    const preflight = request.method === 'OPTIONS' && request.header('access-control-request-method');
    if (!preflight) {
      next();
      return;
    }
    if (allowed) {
      response.setHeader('Access-Control-Allow-Methods', allowedMethods);
      response.setHeader(
        'Access-Control-Allow-Headers',
        request.header('access-control-request-headers') ?? 'Content-Type, Authorization, X-Api-Key',
      );
      response.setHeader('Access-Control-Max-Age', '600');
    }
    response.status(204).end();
  };
}
