/**
 * Temporal's OpenTelemetry workflow interceptors, behind a patch. They wrap scheduling in spans,
 * which moves commands by a microtask or two: a history recorded without them would not replay
 * with them. So a workflow that began before tracing existed (its history has no marker) keeps
 * running without them, and every new workflow or continue-as-new records the marker and is
 * traced (since `leanHistoryPatch`, that marker stands for this one). Spans leave the sandbox through the SDK's `exporter` sink, which is not called on
 * replay; their ids come from the workflow's seeded randomness, so a replay makes the same ones.
 * Except the spans of update validators and queries: those run only on a live worker, never in a
 * replay, so they draw their ids from fresh entropy instead (decision 0255). Drawn from the seeded
 * stream, each would shift every later draw of a replay away from the live run's: a span still
 * open when a worker dies (the `StartActivity` of a model call in flight) would end on the next
 * worker under another id than the one its activity's retry names as parent, and a `uuid4()`
 * after a query or an update's validation would differ on replay.
 */
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import { patched, workflowInfo, type WorkflowInterceptors } from '@temporalio/workflow';
import { getActivator } from '@temporalio/workflow/lib/global-attributes';
import { idleStoragesInterceptor } from './idle-storages';
import { type FoldedPatch, leanHistoryPatch } from './interpreter/patches';

/** The patch id every traced workflow recorded first, before `leanHistoryPatch`. */
export const tracingPatch = 'keel-otel-interceptors' satisfies FoldedPatch;

type Interceptor = (input: unknown, next: (input: unknown) => unknown) => unknown;

/** Each method of `target`, or straight through to `next` while tracing is off for this workflow. */
function gated<T extends object>(target: T, on: () => boolean): T {
  const methods: Record<string, Interceptor> = {};
  for (const name of Object.getOwnPropertyNames(Object.getPrototypeOf(target))) {
    if (name === 'constructor') continue;
    const method = (target as Record<string, Interceptor>)[name]!.bind(target);
    methods[name] = (input, next) => (on() ? method(input, next) : next(input));
  }
  return methods as T;
}

/** `fn` with `Math.random` drawing fresh entropy, for work that a replay does not repeat. */
function offTheSeededStream<T>(fn: () => T): T {
  return getActivator().withCurrentRandom(workflowInfo().unsafe.random, fn);
}

export const interceptors = (): WorkflowInterceptors => {
  let traced = false;
  const on = (): boolean => traced;
  const inbound = gated(new OpenTelemetryInboundInterceptor(), on);
  const execute = inbound.execute.bind(inbound);
  return {
    inbound: [
      {
        ...inbound,
        // Decided once, as the workflow starts (before any handler runs), and recorded in history.
        // The lean-history patch is asked first, so a run since it records that marker alone.
        execute(input, next) {
          traced = patched(leanHistoryPatch) || patched(tracingPatch);
          return execute(input, next);
        },
        // Live only (validators are not run on replay, queries never are): see above.
        validateUpdate: (input, next) => offTheSeededStream(() => inbound.validateUpdate(input, next)),
        handleQuery: (input, next) => offTheSeededStream(() => inbound.handleQuery(input, next)),
      },
    ],
    outbound: [gated(new OpenTelemetryOutboundInterceptor(), on)],
    internals: [idleStoragesInterceptor(), new OpenTelemetryInternalsInterceptor()],
  };
};
