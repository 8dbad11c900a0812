/**
 * Keel's metrics in the worker (Prometheus, through prom-client): model calls, tokens, dollars,
 * tool calls from the activities; runs and approvals from the workflows' sink. Labels are bounded
 * by configuration (provider, model, tool, status, error type), never a thread or run id.
 */
import type { InjectedSinks } from '@temporalio/worker';
import { KeelRegistry } from './metrics-registry';
import type { ApprovalResolvedObservation, KeelSinks, RunEndedObservation } from '../common/sinks';

/** Seconds, from a token (50 ms) to a long agent run (an hour). */
const durationBuckets = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600];

const refusalReasons: ReadonlySet<string> = new Set(['budget_exceeded', 'quota_exceeded']);

export class WorkerMetrics extends KeelRegistry {
  readonly modelCalls = this.counter(
    'keel_model_calls_total',
    'Model call attempts, by provider, model and outcome (ok or error)',
    ['provider', 'model', 'outcome'],
  );
  readonly modelErrors = this.counter(
    'keel_model_errors_total',
    'Failed model call attempts, by provider and error type (ModelRateLimited, ModelOverloaded, …)',
    ['provider', 'error_type', 'retryable'],
  );
  readonly modelRetries = this.counter(
    'keel_model_call_retries_total',
    'Model call attempts after the first (a fault of the model or a worker that died)',
    ['provider'],
  );
  readonly tokens = this.counter(
    'keel_model_tokens_total',
    'Tokens used, by model and kind (input, output, cache_read, cache_write)',
    ['model', 'kind'],
  );
  readonly cost = this.counter(
    'keel_model_cost_usd_total',
    'Dollars spent on model calls, by model (from the price table)',
    ['model'],
  );
  readonly timeToFirstToken = this.histogram(
    'keel_model_time_to_first_token_seconds',
    'From the start of a model call attempt to its first streamed text',
    ['provider', 'model'],
    durationBuckets,
  );
  readonly modelCallDuration = this.histogram(
    'keel_model_call_duration_seconds',
    'Model call attempts, start to end',
    ['provider', 'model', 'outcome'],
    durationBuckets,
  );
  readonly toolCalls = this.counter(
    'keel_tool_calls_total',
    'Tool call attempts, by tool and outcome (ok, error: an is_error result, failed: the activity failed)',
    ['tool', 'outcome'],
  );
  readonly toolCallDuration = this.histogram(
    'keel_tool_call_duration_seconds',
    'Tool call attempts, start to end',
    ['tool'],
    durationBuckets,
  );
  readonly runs = this.counter('keel_runs_total', 'Runs that ended, by status and status_reason', [
    'status',
    'status_reason',
  ]);
  readonly runDuration = this.histogram(
    'keel_run_duration_seconds',
    'Runs, started to ended, by status',
    ['status'],
    durationBuckets,
  );
  readonly approvalWait = this.histogram(
    'keel_approval_wait_seconds',
    'From an approval asked to its decision (approve, deny or timeout)',
    ['decision'],
    durationBuckets,
  );

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
