/**
 * A request that may change something (any method but GET, HEAD and OPTIONS) is taken from a
 * browser only when the browser says it comes from the API's own origin or a listed one
 * (decision 0317). Browsers send `Origin` on every cross-origin request and on same-origin ones
 * that are not GET, and a page cannot forge or remove it; a body-less POST or a no-cors request
 * needs no preflight, so CORS alone never sees it. No `Origin` (curl, the SDKs, the CLI) passes:
 * no browser is involved. `Origin: null` is refused: any page can make its writes say `null`
 * (a sandboxed frame, `Referrer-Policy: no-referrer`).
 */
import type { RequestHandler } from 'express';
import { ApiError } from './errors';

const safeMethods = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The origin a request reached this server at, from its scheme and `Host` (host-check vetted it). */
function ownOrigin(protocol: string, host: string | undefined): string | undefined {
  // Anything past host and port would let the URL parser read another host out of it.
  if (host === undefined || !/^[^@/\\?#\s]+$/.test(host)) return undefined;
  try {
    return new URL(`${protocol}://${host}`).origin;
  } catch {
    return undefined;
  }
}

/** The origin an `Origin` header names, serialized as a URL does (default port dropped, lower case). */
function canonical(origin: string): string | undefined {
  try {
    return new URL(origin).origin;
  } catch {
    return undefined;
  }
}

/**
 * `origins`: allowed besides the API's own, exactly as listed (`*` for any); `setting`: the
 * variable an operator lists them in, named in the 403.
 */
export function originCheck(origins: readonly string[], setting: string): RequestHandler {
  const any = origins.includes('*');
  return (request, _response, next) => {
    const origin = request.headers.origin;
    if (origin === undefined || safeMethods.has(request.method) || any || origins.includes(origin)) {
      next();
      return;
    }
    const own = ownOrigin(request.protocol, request.headers.host);
    if (own !== undefined && canonical(origin) === own) {
      next();
      return;
    }
    const shown = origin.length > 100 ? `${origin.slice(0, 100)}…` : origin;
    next(
      new ApiError(
        403,
        'origin_not_allowed',
        `a page on "${shown}" may not ${request.method} here: requests that change something are taken from this API's own origin or one listed in ${setting}`,
      ),
    );
  };
}
