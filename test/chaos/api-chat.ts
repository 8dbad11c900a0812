/**
 * Chatting through the API's front door, as a client that must never lose a message would: every
 * refusal is recorded with its reason, then the same request is sent again with the same run id
 * (idempotent), so a refusal is counted but never turns into a lost or a doubled message.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Run } from '../../common/run';
import { call, userInput } from '../helpers/api';

/** Why each refused or unavailable request failed, counted by `status code: message`. */
export class IntakeLedger {
  readonly refusals = new Map<string, number>();
  readonly unavailableReads = new Map<string, number>();
  /** Intake latencies in ms (every accepted submission, first try or not). */
  readonly latencies: number[] = [];

  get refused(): number {
    return [...this.refusals.values()].reduce((sum, count) => sum + count, 0);
  }

  static count(map: Map<string, number>, reason: string): void {
    map.set(reason, (map.get(reason) ?? 0) + 1);
  }
}

/** `status code`, grouped across threads (the message names the thread, so it is left out). */
function reasonOf(status: number, body: Record<string, unknown>): string {
  const error = body.error as { code?: string } | undefined;
  return `${status} ${error?.code ?? JSON.stringify(body).slice(0, 80)}`;
}

/** Submits a run until the API accepts it (same run id every time); records refusals. */
export async function submitUntilAccepted(
  base: string,
  threadId: string,
  text: string,
  ledger: IntakeLedger,
  options: { runId?: string; deadline: number; create?: boolean },
): Promise<Run> {
  const runId = options.runId ?? randomUUID();
  const extra = { run_id: runId, ...(options.create === true ? { if_not_exists: 'create' } : {}) };
  for (;;) {
    const started = Date.now();
    const response = await call<Record<string, unknown>>(
      base,
      'POST',
      `/threads/${threadId}/runs`,
      userInput(text, extra),
    ).catch((error: unknown) => ({ status: 0, body: { error: { code: 'fetch', message: String(error) } } }));
    if (response.status === 200) {
      ledger.latencies.push(Date.now() - started);
      return response.body as unknown as Run;
    }
    IntakeLedger.count(ledger.refusals, reasonOf(response.status, response.body));
    if (Date.now() > options.deadline) throw new Error(`run ${runId} on ${threadId} never accepted`);
    await sleep(200);
  }
}

/** Waits until the run has ended (reads that find no worker are retried and counted). */
export async function awaitRunEnd(
  base: string,
  threadId: string,
  runId: string,
  ledger: IntakeLedger,
  deadline: number,
): Promise<Run> {
  for (;;) {
    const joined = await call(base, 'GET', `/threads/${threadId}/runs/${runId}/join?timeout_s=20`).catch(
      (error: unknown) => ({ status: 0, body: { error: { code: 'fetch', message: String(error) } } }),
    );
    if (joined.status === 200) {
      const run = await call<Run>(base, 'GET', `/threads/${threadId}/runs/${runId}`);
      if (run.status === 200) return run.body;
      IntakeLedger.count(ledger.unavailableReads, reasonOf(run.status, run.body as never));
    } else if (joined.status !== 202) {
      IntakeLedger.count(ledger.unavailableReads, reasonOf(joined.status, joined.body));
    }
    if (Date.now() > deadline) throw new Error(`run ${runId} on ${threadId} did not end in time`);
    if (joined.status !== 202) await sleep(500);
  }
}

export function latencySummary(latencies: number[]): {
  count: number;
  p50_ms: number;
  p95_ms: number;
  max_ms: number;
} {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { count: sorted.length, p50_ms: at(0.5), p95_ms: at(0.95), max_ms: sorted.at(-1) ?? 0 };
}
