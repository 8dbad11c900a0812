/**
 * Temporal's OpenTelemetry workflow interceptors, behind a patch. They wrap scheduling in spans,
 * which moves commands by a microtask or two: a history recorded without them would not replay
 * with them. So a workflow that began before tracing existed (its history has no marker) keeps
 * running without them, and every new workflow or continue-as-new records the marker and is
 * traced (since `leanHistoryPatch`, that marker stands for this one). Spans leave the sandbox through the SDK's `exporter` sink, which is not called on
 * replay; their ids come from the workflow's seeded randomness, so a replay makes the same ones.
 */
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import { patched, type WorkflowInterceptors } from '@temporalio/workflow';
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
      },
    ],
    outbound: [gated(new OpenTelemetryOutboundInterceptor(), on)],
    internals: [new OpenTelemetryInternalsInterceptor()],
  };
};
