/**
 * An idle cached workflow's `AsyncLocalStorage`s, disabled between its activations (decision 0282).
 * Node (20) copies into every promise created in the thread one property per enabled storage, and
 * a cached workflow keeps up to two enabled: the SDK's random-source storage (the interceptor
 * composition creates it) and, in a traced run, the context manager of its spans. With N workflows
 * cached, every promise they retain carries ~2N properties: O(N²) memory. Disabled at the end of
 * each activation and enabled again as the next begins, a workflow's storages are in the thread's
 * list only while it runs. The stores already on its promises stay (a disabled storage is only
 * taken out of the list), so what resumes in a later activation reads the same store; a storage
 * reads nothing while disabled, and nothing of the workflow runs then. No command depends on it:
 * the random source outside a storage is the seeded stream in both cases.
 */
import type { WorkflowInternalsInterceptor } from '@temporalio/workflow';
import { getActivator } from '@temporalio/workflow/lib/global-attributes';

export interface IdleStorage {
  disable(): void;
  /** Node's own re-enabling (what `run()` does first); absent where the implementation differs. */
  _enable?: () => void;
}

/**
 * The interceptor for this workflow's storages: the SDK's, and the one `tracing` gives (the
 * context manager of a traced run's spans; undefined while the run is not traced).
 */
export function idleStoragesInterceptor(
  tracing: () => IdleStorage | undefined,
): WorkflowInternalsInterceptor {
  /** This workflow's storages that can be enabled again: the others are left as they are. */
  const storages = (): IdleStorage[] =>
    [
      (getActivator() as unknown as { currentRandomStorage?: IdleStorage }).currentRandomStorage,
      tracing(),
    ].filter((storage): storage is IdleStorage => typeof storage?._enable === 'function');
  return {
    activate(input, next) {
      for (const storage of storages()) storage._enable!();
      return next(input);
    },
    concludeActivation(input, next) {
      const output = next(input);
      for (const storage of storages()) storage.disable();
      return output;
    },
  };
}
