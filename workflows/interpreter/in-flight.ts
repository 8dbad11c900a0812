/**
 * What the interpreter has in flight: activities and children, each inside its run's cancellation
 * scope (cancelling the run cancels them), and webhooks outside every scope. Continue-as-new waits
 * until none is left, so the state alone says what comes next.
 */
import { CancellationScope, isCancellation } from '@temporalio/workflow';

export class InFlight {
  readonly #scopes = new Map<string, CancellationScope>();
  #count = 0;

  get count(): number {
    return this.#count;
  }

  /** Runs `work` inside the run's cancellation scope, counting it as in flight. */
  inRun(runId: string, work: () => Promise<void>): void {
    let scope = this.#scopes.get(runId);
    if (scope === undefined) {
      scope = new CancellationScope();
      this.#scopes.set(runId, scope);
    }
    this.#count++;
    scope
      .run(work)
      .catch((error: unknown) => {
        // A cancelled run's activities end here; the reducer already finished the run.
        if (!isCancellation(error)) throw error;
      })
      .finally(() => {
        this.#count--;
      });
  }

  /** Cancels everything the run has in flight (its activities learn it by heartbeat). */
  cancelRun(runId: string): void {
    this.#scopes.get(runId)?.cancel();
    this.#scopes.delete(runId);
  }

  /**
   * Runs `work` outside every run's scope, so cancelling a run does not stop it; still counted.
   * `work` handles its own failures.
   */
  outsideRuns(work: () => Promise<void>): void {
    this.#count++;
    void CancellationScope.nonCancellable(work).finally(() => {
      this.#count--;
    });
  }
}
