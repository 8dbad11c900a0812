/**
 * The stall watchdog every streaming provider shares: a fetch that re-arms a timer on every
 * chunk of the response body and aborts the request when the body goes silent. Silence is
 * measured on bytes, not SDK events: SDKs swallow the keep-alive pings a thinking model sends.
 */

export interface StallWatch {
  /** Aborts when the caller's signal does or the stream stalls. */
  signal: AbortSignal;
  /** A fetch bound to `signal` that re-arms the watchdog on every chunk. */
  fetch: typeof fetch;
  stalled(): boolean;
  dispose(): void;
}

export function watchForStalls(outer: AbortSignal, timeoutMs: number): StallWatch {
  const abort = new AbortController();
  const onAbort = (): void => abort.abort(outer.reason);
  outer.addEventListener('abort', onAbort, { once: true });
  let stalled = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      stalled = true;
      abort.abort(new Error('stream stalled'));
    }, timeoutMs);
  };
  arm();
  const watchedFetch: typeof fetch = async (input, init) => {
    const signal = init?.signal ? AbortSignal.any([init.signal, abort.signal]) : abort.signal;
    const response = await fetch(input, { ...init, signal });
    if (response.body === null) return response;
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          arm();
          controller.enqueue(chunk);
        },
      }),
    );
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
  return {
    signal: abort.signal,
    fetch: watchedFetch,
    stalled: () => stalled,
    dispose: () => {
      clearTimeout(timer);
      outer.removeEventListener('abort', onAbort);
    },
  };
}
