/**
 * The spans of a run since `tracingPerWorkerPatch`, on a worker that exports spans (decision 0290):
 * the spans Temporal's OpenTelemetry workflow interceptors make (same names, parents, attributes and
 * `_tracer-data` headers), made so that a worker that does not trace runs the same workflow exactly
 * alike. So, unlike Temporal's interceptors:
 *
 * - **No await of their own.** Each interceptor returns the very promise `next` returned, and ends
 *   its span in a reaction of its own: every continuation of workflow code runs on the same
 *   microtask as without tracing, so no command moves.
 * - **Ids from the run's own random stream** (`getRandomStream`, derived from the workflow's seed),
 *   never from the workflow's `Math.random`: a replay makes the ids the live run made (a span still
 *   open when a worker dies ends under the id its activity's retry names as parent), and tracing on
 *   or off never moves a `uuid4()` of workflow code. Update validators and queries run only live,
 *   never in a replay, so their spans draw fresh entropy instead (decision 0255).
 *
 * Loaded (with OpenTelemetry) only by a run that is traced: `require`d, not imported, by
 * `workflows/tracing-interceptors.ts`, since every module of the bundle a workflow loads is
 * evaluated again for that workflow and kept while it is cached (decision 0280).
 */
// First: OpenTelemetry's core reads `performance` as it loads, which this defines from the workflow's clock.
import '@temporalio/interceptors-opentelemetry/lib/workflow/runtime';
import * as otel from '@opentelemetry/api';
import { BasicTracerProvider, type IdGenerator, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ApplicationFailure, ApplicationFailureCategory } from '@temporalio/common';
import {
  extractContextFromHeaders,
  headersWithContext,
  NEXUS_ENDPOINT_ATTR_KEY,
  NEXUS_OPERATION_ATTR_KEY,
  NEXUS_SERVICE_ATTR_KEY,
  nexusHeadersWithContext,
  UPDATE_ID_ATTR_KEY,
} from '@temporalio/interceptors-opentelemetry/lib/instrumentation';
import { ContextManager } from '@temporalio/interceptors-opentelemetry/lib/workflow/context-manager';
import { SPAN_DELIMITER, SpanName } from '@temporalio/interceptors-opentelemetry/lib/workflow/definitions';
import { SpanExporter } from '@temporalio/interceptors-opentelemetry/lib/workflow/span-exporter';
import { ContinueAsNew, getRandomStream, workflowInfo } from '@temporalio/workflow';
import type { IdleStorage } from '../idle-storages';
import type { RunTracing } from './run-tracing';

/** The name of the run's span-id stream: changing it changes every id a replay makes. */
const idStream = 'keel-span-ids';

/** Span and trace ids from the run's own stream, or from fresh entropy while `live` runs. */
class RunIds implements IdGenerator {
  private readonly stream = getRandomStream(idStream);
  private liveOnly = false;

  generateTraceId(): string {
    return this.hex(4);
  }

  generateSpanId(): string {
    return this.hex(2);
  }

  /** `fn`, whose spans draw fresh entropy: they are made on a live worker only, never in a replay. */
  live<T>(fn: () => T): T {
    this.liveOnly = true;
    try {
      return fn();
    } finally {
      this.liveOnly = false;
    }
  }

  /** `words` × 32 random bits in hex; never all zeros (an invalid id). */
  private hex(words: number): string {
    const random = this.liveOnly ? workflowInfo().unsafe.random : this.stream;
    let id = '';
    for (let word = 0; word < words; word++)
      id += Math.floor(random.random() * 2 ** 32)
        .toString(16)
        .padStart(8, '0');
    return /^0+$/.test(id) ? this.hex(words) : id;
  }
}

/** Temporal's context manager (an `AsyncLocalStorage` of the workflow's), its storage readable. */
class RunContextManager extends ContextManager {
  get asyncStorage(): IdleStorage {
    return this.storage;
  }
}

type Acceptable = (error: unknown) => boolean;
const continuedAsNew: Acceptable = (error) => error instanceof ContinueAsNew;

/** Ends `span` as Temporal's interceptors do: OK, or the error (a benign application failure unset). */
function settle(span: otel.Span, error: unknown, failed: boolean, acceptable?: Acceptable): void {
  if (!failed || acceptable?.(error) === true) span.setStatus({ code: otel.SpanStatusCode.OK });
  else {
    const benign =
      error instanceof ApplicationFailure && error.category === ApplicationFailureCategory.BENIGN;
    const message =
      error !== null && typeof (error as { message?: unknown }).message === 'string'
        ? (error as { message: string }).message
        : String(error);
    span.setStatus({ code: benign ? otel.SpanStatusCode.UNSET : otel.SpanStatusCode.ERROR, message });
    span.recordException(error as otel.Exception);
  }
  span.end();
}

export function runSpans(): RunTracing {
  const ids = new RunIds();
  const contextManager = new RunContextManager();
  const provider = new BasicTracerProvider({
    idGenerator: ids,
    spanProcessors: [new SimpleSpanProcessor(new SpanExporter())],
  });
  // Into this workflow's own copy of the OpenTelemetry API: its context manager and W3C propagation.
  provider.register({ contextManager });
  const tracer = provider.getTracer('@temporalio/interceptor-workflow');

  /** A span named `name`, child of `parent` (from headers) or of the active span, and its context. */
  const start = (name: string, parent: otel.Context | undefined, attributes?: otel.Attributes) => {
    const base = parent ?? otel.context.active();
    const span = tracer.startSpan(name, attributes === undefined ? {} : { attributes }, base);
    return { span, context: otel.trace.setSpan(base, span) };
  };

  /** `fn()` inside a span that ends when its promise settles; the caller gets that very promise. */
  function around<T>(
    name: string,
    fn: () => Promise<T>,
    options: {
      parent?: otel.Context | undefined;
      attributes?: otel.Attributes;
      acceptable?: Acceptable;
    } = {},
  ): Promise<T> {
    const { span, context } = start(name, options.parent, options.attributes);
    let result: Promise<T>;
    try {
      result = otel.context.with(context, fn);
    } catch (error) {
      settle(span, error, true, options.acceptable);
      throw error;
    }
    result.then(
      () => settle(span, undefined, false),
      (error: unknown) => settle(span, error, true, options.acceptable),
    );
    return result;
  }

  const name = (kind: string, what: string): string => `${kind}${SPAN_DELIMITER}${what}`;

  return {
    storage: () => contextManager.asyncStorage,
    inbound: {
      execute: (input, next) =>
        around(name(SpanName.WORKFLOW_EXECUTE, workflowInfo().workflowType), () => next(input), {
          parent: extractContextFromHeaders(input.headers),
          acceptable: continuedAsNew,
        }),
      handleSignal: (input, next) =>
        around(name(SpanName.WORKFLOW_HANDLE_SIGNAL, input.signalName), () => next(input), {
          parent: extractContextFromHeaders(input.headers),
        }),
      handleUpdate: (input, next) =>
        around(name(SpanName.WORKFLOW_HANDLE_UPDATE, input.name), () => next(input), {
          parent: extractContextFromHeaders(input.headers),
          attributes: { [UPDATE_ID_ATTR_KEY]: input.updateId },
        }),
      validateUpdate(input, next) {
        const { span, context } = ids.live(() =>
          start(
            name(SpanName.WORKFLOW_VALIDATE_UPDATE, input.name),
            extractContextFromHeaders(input.headers),
            {
              [UPDATE_ID_ATTR_KEY]: input.updateId,
            },
          ),
        );
        try {
          otel.context.with(context, () => next(input));
        } catch (error) {
          settle(span, error, true);
          throw error;
        }
        settle(span, undefined, false);
      },
      handleQuery(input, next) {
        const { span, context } = ids.live(() =>
          start(
            name(SpanName.WORKFLOW_HANDLE_QUERY, input.queryName),
            extractContextFromHeaders(input.headers),
          ),
        );
        let result: Promise<unknown>;
        try {
          result = otel.context.with(context, () => next(input));
        } catch (error) {
          settle(span, error, true);
          throw error;
        }
        result.then(
          () => settle(span, undefined, false),
          (error: unknown) => settle(span, error, true),
        );
        return result;
      },
    },
    outbound: {
      scheduleActivity: (input, next) =>
        around(name(SpanName.ACTIVITY_START, input.activityType), () =>
          next({ ...input, headers: headersWithContext(input.headers) }),
        ),
      scheduleLocalActivity: (input, next) =>
        around(name(SpanName.ACTIVITY_START, input.activityType), () =>
          next({ ...input, headers: headersWithContext(input.headers) }),
        ),
      startNexusOperation: (input, next) =>
        around(
          name(SpanName.NEXUS_OPERATION_START, `${input.service}/${input.operation}`),
          () => next({ ...input, headers: nexusHeadersWithContext(input.headers) }),
          {
            attributes: {
              [NEXUS_SERVICE_ATTR_KEY]: input.service,
              [NEXUS_OPERATION_ATTR_KEY]: input.operation,
              [NEXUS_ENDPOINT_ATTR_KEY]: input.endpoint,
            },
          },
        ),
      startChildWorkflowExecution: (input, next) =>
        around(name(SpanName.CHILD_WORKFLOW_START, input.workflowType), () =>
          next({ ...input, headers: headersWithContext(input.headers) }),
        ),
      continueAsNew: (input, next) =>
        around(
          name(SpanName.CONTINUE_AS_NEW, input.options.workflowType),
          () => next({ ...input, headers: headersWithContext(input.headers) }),
          { acceptable: continuedAsNew },
        ),
      signalWorkflow: (input, next) =>
        around(name(SpanName.WORKFLOW_SIGNAL, input.signalName), () =>
          next({ ...input, headers: headersWithContext(input.headers) }),
        ),
      getLogAttributes(input, next) {
        const spanContext = otel.trace.getSpan(otel.context.active())?.spanContext();
        if (spanContext === undefined || !otel.isSpanContextValid(spanContext)) return next(input);
        return next({
          trace_id: spanContext.traceId,
          span_id: spanContext.spanId,
          trace_flags: `0${spanContext.traceFlags.toString(16)}`,
          ...input,
        });
      },
    },
    dispose() {
      contextManager.disable();
    },
  };
}
