/**
 * Keel's metrics in the worker (Prometheus, through prom-client): model calls, tokens, dollars,
 * tool calls from the activities; runs and approvals from the workflows' sink. Labels are bounded
 * by configuration (provider, model, tool, status, error type), never a thread or run id.
 */
import type { InjectedSinks } from '@temporalio/worker';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import type { ApprovalResolvedObservation, KeelSinks, RunEndedObservation } from '../common/sinks';

/** Seconds, from a token (50 ms) to a long agent run (an hour). */
const durationBuckets = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600];

const refusalReasons: ReadonlySet<string> = new Set(['budget_exceeded', 'quota_exceeded']);

export class WorkerMetrics {
  readonly registry = new Registry();
  readonly modelCalls = new Counter({
    name: 'keel_model_calls_total',
    help: 'Model call attempts, by provider, model and outcome (ok or error)',
    labelNames: ['provider', 'model', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly modelErrors = new Counter({
    name: 'keel_model_errors_total',
    help: 'Failed model call attempts, by provider and error type (ModelRateLimited, ModelOverloaded, …)',
    labelNames: ['provider', 'error_type', 'retryable'] as const,
    registers: [this.registry],
  });
  readonly modelRetries = new Counter({
    name: 'keel_model_call_retries_total',
    help: 'Model call attempts after the first (a fault of the model or a worker that died)',
    labelNames: ['provider'] as const,
    registers: [this.registry],
  });
  readonly tokens = new Counter({
    name: 'keel_model_tokens_total',
    help: 'Tokens used, by model and kind (input, output, cache_read, cache_write)',
    labelNames: ['model', 'kind'] as const,
    registers: [this.registry],
  });
  readonly cost = new Counter({
    name: 'keel_model_cost_usd_total',
    help: 'Dollars spent on model calls, by model (from the price table)',
    labelNames: ['model'] as const,
    registers: [this.registry],
  });
  readonly timeToFirstToken = new Histogram({
    name: 'keel_model_time_to_first_token_seconds',
    help: 'From the start of a model call attempt to its first streamed text',
    labelNames: ['provider', 'model'] as const,
    buckets: durationBuckets,
    registers: [this.registry],
  });
  readonly modelCallDuration = new Histogram({
    name: 'keel_model_call_duration_seconds',
    help: 'Model call attempts, start to end',
    labelNames: ['provider', 'model', 'outcome'] as const,
    buckets: durationBuckets,
    registers: [this.registry],
  });
  readonly toolCalls = new Counter({
    name: 'keel_tool_calls_total',
    help: 'Tool call attempts, by tool and outcome (ok, error: an is_error result, failed: the activity failed)',
    labelNames: ['tool', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly toolCallDuration = new Histogram({
    name: 'keel_tool_call_duration_seconds',
    help: 'Tool call attempts, start to end',
    labelNames: ['tool'] as const,
    buckets: durationBuckets,
    registers: [this.registry],
  });
  readonly runs = new Counter({
    name: 'keel_runs_total',
    help: 'Runs that ended, by status and status_reason',
    labelNames: ['status', 'status_reason'] as const,
    registers: [this.registry],
  });
  /** Runs a budget or a quota ended before a model call (decision 0440); the API counts the rest. */
  readonly refusals = new Counter({
    name: 'keel_refusals_total',
    help: 'Runs refused for spend or concurrency, by reason (budget_exceeded, quota_exceeded, concurrency)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly runDuration = new Histogram({
    name: 'keel_run_duration_seconds',
    help: 'Runs, started to ended, by status',
    labelNames: ['status'] as const,
    buckets: durationBuckets,
    registers: [this.registry],
  });
  readonly approvalWait = new Histogram({
    name: 'keel_approval_wait_seconds',
    help: 'From an approval asked to its decision (approve, deny or timeout)',
    labelNames: ['decision'] as const,
    buckets: durationBuckets,
    registers: [this.registry],
  });

  /** With the process's own metrics (CPU, memory, event loop lag) when this registry is served. */
  withProcessMetrics(): this {
    collectDefaultMetrics({ register: this.registry });
    return this;
  }

  /** The sink the workflows report runs and approvals through (common/sinks.ts). */
  sinks(): InjectedSinks<KeelSinks> {
    return {
      keelMetrics: {
        runEnded: {
          fn: (_info, observation: RunEndedObservation) => {
            this.runs.inc({ status: observation.status, status_reason: observation.status_reason });
            if (refusalReasons.has(observation.status_reason) && observation.refused !== true)
              this.refusals.inc({ reason: observation.status_reason });
            this.runDuration.observe({ status: observation.status }, observation.duration_ms / 1000);
          },
        },
        approvalResolved: {
          fn: (_info, observation: ApprovalResolvedObservation) => {
            this.approvalWait.observe({ decision: observation.decision }, observation.wait_ms / 1000);
          },
        },
      },
    };
  }
}
