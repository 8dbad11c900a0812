/** One turn through the HTTP API, as a client makes it: `POST /threads/:id/runs/wait`. */
// Node's fetch (undici) opens as many connections per origin as there are requests in flight.
export interface TurnResult {
  ms: number;
  status: number;
  /** The run's outcome: `completed`, or the error the API reported. */
  outcome: string;
  bytes: number;
}

export async function turn(
  apiUrl: string,
  threadId: string,
  text: string,
  timeoutS = 600,
): Promise<TurnResult> {
  const started = performance.now();
  const response = await fetch(`${apiUrl}/threads/${threadId}/runs/wait?timeout_s=${timeoutS}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ if_not_exists: 'create', input: { messages: [{ role: 'user', content: text }] } }),
  });
  const body = await response.text();
  const ms = performance.now() - started;
  return { ms, status: response.status, outcome: outcomeOf(response.status, body), bytes: body.length };
}

/** A `runs/wait` or `join` answer's outcome: `completed`, the run's error, or the HTTP status and error code. */
export function outcomeOf(status: number, body: string): string {
  if (status !== 200) {
    // The API's error code, when it sent one (`HTTP 503 temporal_unavailable`).
    const code = (() => {
      try {
        return (JSON.parse(body) as { error?: { code?: string } }).error?.code;
      } catch {
        return undefined;
      }
    })();
    return code === undefined ? `HTTP ${status}` : `HTTP ${status} ${code}`;
  }
  return (JSON.parse(body) as { __error__?: { error: string } }).__error__?.error ?? 'completed';
}

/** Fails loudly: a benchmark of turns that did not complete measures nothing. */
export function expectCompleted(result: TurnResult, what: string): void {
  if (result.outcome !== 'completed') throw new Error(`${what}: the turn ended ${result.outcome}`);
}
