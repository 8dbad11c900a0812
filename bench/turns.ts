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
  let outcome = `HTTP ${response.status}`;
  if (response.status === 200) {
    const values = JSON.parse(body) as { __error__?: { error: string } };
    outcome = values.__error__?.error ?? 'completed';
  }
  return { ms, status: response.status, outcome, bytes: body.length };
}

/** Fails loudly: a benchmark of turns that did not complete measures nothing. */
export function expectCompleted(result: TurnResult, what: string): void {
  if (result.outcome !== 'completed') throw new Error(`${what}: the turn ended ${result.outcome}`);
}
