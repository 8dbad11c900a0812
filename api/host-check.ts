/**
 * The `Host` a request names must be one this API serves (decision 0311): a page on another
 * site that rebinds its own name to 127.0.0.1 reaches the API with `Host: <its name>`, and is
 * answered 421 before anything else runs. IP literals always pass: only a name can be rebound,
 * and a page can make a browser send an IP literal only to that address itself.
 */
import { isIP } from 'node:net';
import type { RequestHandler } from 'express';
import { ApiError } from './errors';

/** The name in a `Host` header, lower-case, without port, brackets or a trailing dot. */
export function hostName(header: string): string {
  if (isIP(header) !== 0) return header.toLowerCase();
  const bracketed = /^\[([^\]]*)\](?::\d*)?$/.exec(header);
  const name = bracketed?.[1] ?? header.replace(/:\d*$/, '');
  return name.toLowerCase().replace(/\.$/, '');
}

/** `allowed`: names (any port); `*` lets every host through. */
export function hostCheck(allowed: readonly string[]): RequestHandler {
  const names = new Set(allowed.map(hostName));
  return (request, _response, next) => {
    const header = request.headers.host;
    // HTTP/1.0 may omit it; a browser never does.
    if (header === undefined || names.has('*')) {
      next();
      return;
    }
    const name = hostName(header);
    if (names.has(name) || isIP(name) !== 0) {
      next();
      return;
    }
    const shown = header.length > 100 ? `${header.slice(0, 100)}…` : header;
    next(
      new ApiError(
        421,
        'host_not_allowed',
        `this API does not serve the host "${shown}"; an operator adds names it is reached by to KEEL_API_ALLOWED_HOSTS`,
      ),
    );
  };
}
