/**
 * A URL as logs and errors may show it: scheme, host and path, without credentials, query or
 * fragment — webhook receivers often carry their token there.
 */
export function urlForLogs(url: string): string {
  return url.replace(/[?#][\s\S]*$/, '').replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1');
}

/** The innermost message of an error and its causes (an activity failure wraps the reason). */
export function innermostMessage(error: unknown): string {
  let current: unknown = error;
  let message = String(error);
  for (let depth = 0; depth < 10 && typeof current === 'object' && current !== null; depth++) {
    const { message: own, cause } = current as { message?: unknown; cause?: unknown };
    if (typeof own === 'string' && own !== '') message = own;
    current = cause;
  }
  return message;
}
