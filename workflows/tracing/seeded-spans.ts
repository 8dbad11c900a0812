/**
 * Temporal's OpenTelemetry workflow interceptors, as every run recorded before
 * `tracingPerWorkerPatch` took them (decision 0122): on every worker, with span ids from the
 * workflow's seeded randomness, and with the `async` wrappers that move a result by a few
 * microtasks. Such a run must keep all of it to replay: dropped, the workflow's later `uuid4()`s and
 * the order of its coroutines' commands could differ from the recorded ones. Except the spans of
 * update validators and queries: those run only on a live worker, never in a replay, so they draw
 * their ids from fresh entropy (decision 0255).
 *
 * Loaded only by such a run (`require`d by `workflows/tracing-interceptors.ts`): OpenTelemetry's
 * modules are evaluated per workflow (decision 0280).
 */
import { context } from '@opentelemetry/api';
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import { workflowInfo } from '@temporalio/workflow';
import { getActivator } from '@temporalio/workflow/lib/global-attributes';
import type { IdleStorage } from '../idle-storages';
import type { RunTracing } from './run-tracing';

/** `fn` with `Math.random` drawing fresh entropy, for work that a replay does not repeat. */
function offTheSeededStream<T>(fn: () => T): T {
  return getActivator().withCurrentRandom(workflowInfo().unsafe.random, fn);
}

export function seededSpans(): RunTracing {
  const inbound = new OpenTelemetryInboundInterceptor();
  const outbound = new OpenTelemetryOutboundInterceptor();
  const internals = new OpenTelemetryInternalsInterceptor();
  return {
    inbound: {
      execute: (input, next) => inbound.execute(input, next),
      handleSignal: (input, next) => inbound.handleSignal(input, next),
      handleUpdate: (input, next) => inbound.handleUpdate(input, next),
      // Live only (validators are not run on replay, queries never are): see above.
      validateUpdate: (input, next) => offTheSeededStream(() => inbound.validateUpdate(input, next)),
      handleQuery: (input, next) => offTheSeededStream(() => inbound.handleQuery(input, next)),
    },
    outbound,
    storage: () =>
      (context as unknown as { _getContextManager(): { storage?: IdleStorage } })._getContextManager()
        .storage,
    dispose: () => internals.dispose({}, () => undefined),
  };
}
