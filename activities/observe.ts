/**
 * Spans and metrics around the model and tool activities, from the outside: `callModel` and
 * `runTool` stay as they are. Each attempt is a span of its own (OpenTelemetry's GenAI semantic
 * conventions: `chat <model>`, `execute_tool <name>`), a child of Temporal's `RunActivity` span,
 * so a retried call shows every attempt in the run's trace.
 */
import { performance } from 'node:perf_hooks';
import { context, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { CallModelInput, CallModelResult, RunToolInput } from '../common/activities';
import { parseModelSpec } from '../common/model-spec';
import type { ToolOutcome } from '../common/tools';
import { tracer } from '../telemetry/tracing';
import type { WorkerMetrics } from '../telemetry/worker-metrics';
import type { ModelClients } from './model/clients';

export interface ActivityTelemetry {
  metrics: WorkerMetrics;
  /** Prompts and completions on model spans (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`). */
  captureContent: boolean;
}

type CallModel = (input: CallModelInput) => Promise<CallModelResult>;
type RunTool = (input: RunToolInput) => Promise<ToolOutcome>;

const seconds = (since: number): number => (performance.now() - since) / 1000;

function attempt(): number {
  return Context.current().info.attempt;
}

/** The failure's type as Temporal sees it (ModelRateLimited, ModelOverloaded, …), else its name. */
function errorType(error: unknown): { type: string; retryable: boolean } {
  if (error instanceof ApplicationFailure)
    return { type: error.type ?? 'Error', retryable: !error.nonRetryable };
  return { type: error instanceof Error ? error.name : 'Error', retryable: true };
}

function failSpan(span: Span, error: unknown, type: string): void {
  span.setAttribute('error.type', type);
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
}

/** Times each model client's first streamed text (time to first token) and marks it on the span. */
export function observeModelClients(clients: ModelClients, metrics: WorkerMetrics): ModelClients {
  return (spec) => {
    const client = clients(spec);
    const countInputTokens = client.countInputTokens?.bind(client);
    return {
      // What the budget needs of the client passes through as it is: without it an observed call's
      // input would be estimated and every failed attempt counted as billed (decision 0425).
      ...(countInputTokens === undefined ? {} : { countInputTokens }),
      ...(client.reportsAnswerStart === undefined ? {} : { reportsAnswerStart: client.reportsAnswerStart }),
      complete(request) {
        const { onTextDelta } = request;
        if (onTextDelta === undefined) return client.complete(request);
        const started = performance.now();
        let first = true;
        return client.complete({
          ...request,
          onTextDelta: (text) => {
            if (first) {
              first = false;
              metrics.timeToFirstToken.observe(
                { provider: spec.provider, model: spec.model },
                seconds(started),
              );
              trace.getActiveSpan()?.addEvent('gen_ai.first_token');
            }
            onTextDelta(text);
          },
        });
      },
    };
  };
}

export function observeModelCall(
  callModel: CallModel,
  { metrics, captureContent }: ActivityTelemetry,
): CallModel {
  return async (input) => {
    const spec = parseModelSpec(input.model);
    const provider = typeof spec === 'string' ? 'unknown' : spec.provider;
    const model = typeof spec === 'string' ? input.model : spec.model;
    const tries = attempt();
    if (tries > 1) metrics.modelRetries.inc({ provider });
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': provider,
      'gen_ai.system': provider,
      'gen_ai.request.model': model,
      'keel.thread_id': input.thread_id,
      'keel.run_id': input.run_id,
      'keel.step': input.step,
      'keel.attempt': tries,
    };
    if (captureContent && input.messages !== undefined)
      attributes['gen_ai.input.messages'] = JSON.stringify(input.messages);
    const span = tracer().startSpan(`chat ${model}`, { kind: SpanKind.CLIENT, attributes });
    const started = performance.now();
    try {
      const result = await context.with(trace.setSpan(context.active(), span), () => callModel(input));
      const { usage } = result;
      span.setAttributes({
        'gen_ai.response.model': result.model,
        'gen_ai.response.finish_reasons': [result.stop_reason],
        'gen_ai.usage.input_tokens': usage.input_tokens,
        'gen_ai.usage.output_tokens': usage.output_tokens,
        'gen_ai.usage.cache_read.input_tokens': usage.cache_read_input_tokens,
        'gen_ai.usage.cache_creation.input_tokens': usage.cache_creation_input_tokens,
        'keel.cost_usd': usage.cost_usd,
      });
      if (captureContent) span.setAttribute('gen_ai.output.messages', JSON.stringify(result.content));
      metrics.modelCalls.inc({ provider, model, outcome: 'ok' });
      metrics.modelCallDuration.observe({ provider, model, outcome: 'ok' }, seconds(started));
      metrics.tokens.inc({ model, kind: 'input' }, usage.input_tokens);
      metrics.tokens.inc({ model, kind: 'output' }, usage.output_tokens);
      metrics.tokens.inc({ model, kind: 'cache_read' }, usage.cache_read_input_tokens);
      metrics.tokens.inc({ model, kind: 'cache_write' }, usage.cache_creation_input_tokens);
      metrics.cost.inc({ model }, usage.cost_usd);
      return result;
    } catch (error) {
      const { type, retryable } = errorType(error);
      failSpan(span, error, type);
      metrics.modelCalls.inc({ provider, model, outcome: 'error' });
      metrics.modelCallDuration.observe({ provider, model, outcome: 'error' }, seconds(started));
      metrics.modelErrors.inc({ provider, error_type: type, retryable: String(retryable) });
      throw error;
    } finally {
      span.end();
    }
  };
}

export function observeToolCall(runTool: RunTool, { metrics }: ActivityTelemetry): RunTool {
  return async (input) => {
    const span = tracer().startSpan(`execute_tool ${input.name}`, {
      kind: SpanKind.INTERNAL,
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': input.name,
        'gen_ai.tool.call.id': input.tool_use_id,
        'keel.thread_id': input.thread_id,
        'keel.run_id': input.run_id,
        'keel.attempt': attempt(),
      },
    });
    const started = performance.now();
    try {
      const outcome = await context.with(trace.setSpan(context.active(), span), () => runTool(input));
      if (outcome.is_error === true) {
        span.setAttribute('error.type', 'tool_error');
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'the tool answered with an error result' });
      }
      metrics.toolCalls.inc({ tool: input.name, outcome: outcome.is_error === true ? 'error' : 'ok' });
      return outcome;
    } catch (error) {
      failSpan(span, error, errorType(error).type);
      metrics.toolCalls.inc({ tool: input.name, outcome: 'failed' });
      throw error;
    } finally {
      metrics.toolCallDuration.observe({ tool: input.name }, seconds(started));
      span.end();
    }
  };
}
