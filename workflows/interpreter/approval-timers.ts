/**
 * Durable approval timers: one Temporal timer per pending approval. Firing sends
 * `approvalExpired` to the reducer, which ignores approvals already decided; a decision cancels
 * the timer so history stays short.
 */
import { CancellationScope, isCancellation, sleep } from '@temporalio/workflow';

export class ApprovalTimers {
  readonly #scopes = new Map<string, CancellationScope>();

  constructor(private readonly onExpired: (approvalId: string) => void) {}

  start(approvalId: string, expiresAtMs: number): void {
    if (this.#scopes.has(approvalId)) return;
    const scope = new CancellationScope();
    this.#scopes.set(approvalId, scope);
    // Date.now() is the workflow clock: deterministic on replay.
    const delay = Math.max(1, expiresAtMs - Date.now());
    scope
      .run(() => sleep(delay))
      .then(
        () => {
          this.#scopes.delete(approvalId);
          this.onExpired(approvalId);
        },
        (error: unknown) => {
          if (!isCancellation(error)) throw error;
        },
      );
  }

  cancel(approvalId: string): void {
    this.#scopes.get(approvalId)?.cancel();
    this.#scopes.delete(approvalId);
  }
}
