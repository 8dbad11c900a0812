/**
 * An idle cached workflow's `AsyncLocalStorage`s, disabled between its activations (decision 0282).
 * Node (20) copies into every promise created in the thread one property per enabled storage, and
 * each cached workflow keeps two enabled: the SDK's random-source storage (the interceptor
 * composition creates it) and the context manager of Temporal's OpenTelemetry interceptors. With
 * N workflows cached, every promise they retain carries ~2N properties: O(N²) memory. Disabled at
 * the end of each activation and enabled again as the next begins, a workflow's storages are in the
 * thread's list only while it runs. The stores already on its promises stay (a disabled storage is
 * only taken out of the list), so what resumes in a later activation reads the same store; a
 * storage reads nothing while disabled, and nothing of the workflow runs then. No command depends
 * on it: the random source outside a storage is the seeded stream in both cases.
 */
import { context } from '@opentelemetry/api';
import type { WorkflowInternalsInterceptor } from '@temporalio/workflow';
import { getActivator } from '@temporalio/workflow/lib/global-attributes';

interface Storage {
  disable(): void;
  /** Node's own re-enabling (what `run()` does first); absent where the implementation differs. */
  _enable?: () => void;
}

/** This workflow's storages that can be enabled again: the others are left as they are. */
function storages(): Storage[] {
  const found: (Storage | undefined)[] = [
    (getActivator() as unknown as { currentRandomStorage?: Storage }).currentRandomStorage,
    (context as unknown as { _getContextManager(): { storage?: Storage } })._getContextManager().storage,
  ];
  return found.filter((storage): storage is Storage => typeof storage?._enable === 'function');
}

export function idleStoragesInterceptor(): WorkflowInternalsInterceptor {
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
