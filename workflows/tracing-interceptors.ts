/**
 * Tracing of workflows: which spans a run makes, decided once as it starts and recorded in its
 * history (decisions 0122, 0290).
 *
 * - A run since `tracingPerWorkerPatch` is traced on a worker that exports spans and not on one
 *   that does not (`tracing/worker-traces.ts`), and runs alike on both: its spans await nothing and
 *   draw their ids from a random stream of their own (`tracing/run-spans.ts`), so a replay on a
 *   worker of the other kind issues the same commands and draws the same `uuid4()`s.
 * - A run recorded before that patch with the tracing marker (`keel-otel-interceptors`, or
 *   `keel-lean-history` which stands for it) keeps Temporal's own interceptors on every worker,
 *   as recorded (`tracing/seeded-spans.ts`).
 * - A run from before tracing existed (no marker) runs without spans, as recorded.
 *
 * The span code and OpenTelemetry are `require`d only by a run that makes spans: the SDK evaluates
 * every module of the bundle a workflow loads once more for that workflow and keeps it while the
 * workflow is cached (decision 0280), so a run that is not traced never loads them.
 */
import {
  patched,
  type WorkflowInboundCallsInterceptor,
  type WorkflowInterceptors,
  type WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { idleStoragesInterceptor } from './idle-storages';
import { type FoldedPatch, leanHistoryPatch, tracingPerWorkerPatch } from './interpreter/patches';
import type * as RunSpans from './tracing/run-spans';
import type { RunTracing } from './tracing/run-tracing';
import type * as SeededSpans from './tracing/seeded-spans';
import { workerTraces } from './tracing/worker-traces';

/** The patch id every traced workflow recorded first, before `leanHistoryPatch`. */
export const tracingPatch = 'keel-otel-interceptors' satisfies FoldedPatch;

/* eslint-disable no-restricted-globals, @typescript-eslint/no-require-imports -- a static
   `require` in a function: webpack bundles the module as any other and evaluates it on the first
   call, for the workflow that calls. */
const loadRunSpans = (): RunTracing => (require('./tracing/run-spans') as typeof RunSpans).runSpans();
const loadSeededSpans = (): RunTracing =>
  (require('./tracing/seeded-spans') as typeof SeededSpans).seededSpans();
/* eslint-enable no-restricted-globals, @typescript-eslint/no-require-imports */

/**
 * This run's spans, or none. The patches are asked in this order as the run starts, before any
 * handler runs: a new run records the first marker alone (it stands for the others, patches.ts).
 */
function startTracing(): RunTracing | undefined {
  if (patched(tracingPerWorkerPatch)) return workerTraces() ? loadRunSpans() : undefined;
  if (patched(leanHistoryPatch) || patched(tracingPatch)) return loadSeededSpans();
  return undefined;
}

type Interceptor = (input: unknown, next: (input: unknown) => unknown) => unknown;

/** The methods `names` of an interceptor: each the traced run's, or straight through to `next`. */
function delegating<T extends object>(names: readonly (keyof T & string)[], traced: () => T | undefined): T {
  const methods: Record<string, Interceptor> = {};
  for (const name of names)
    methods[name] = (input, next) => {
      const target = traced() as Record<string, Interceptor> | undefined;
      return target?.[name] === undefined ? next(input) : target[name](input, next);
    };
  return methods as T;
}

const inboundMethods = ['handleSignal', 'handleUpdate', 'validateUpdate', 'handleQuery'] as const;
const outboundMethods = [
  'scheduleActivity',
  'scheduleLocalActivity',
  'startNexusOperation',
  'startChildWorkflowExecution',
  'continueAsNew',
  'signalWorkflow',
  'getLogAttributes',
  'getMetricTags',
] as const;

export const interceptors = (): WorkflowInterceptors => {
  let tracing: RunTracing | undefined;
  const inbound = delegating<WorkflowInboundCallsInterceptor>(inboundMethods, () => tracing?.inbound);
  return {
    inbound: [
      {
        ...inbound,
        execute(input, next) {
          tracing = startTracing();
          return tracing?.inbound.execute === undefined ? next(input) : tracing.inbound.execute(input, next);
        },
      },
    ],
    outbound: [delegating<WorkflowOutboundCallsInterceptor>(outboundMethods, () => tracing?.outbound)],
    internals: [
      idleStoragesInterceptor(() => tracing?.storage()),
      {
        dispose(input, next) {
          tracing?.dispose();
          next(input);
        },
      },
    ],
  };
};
