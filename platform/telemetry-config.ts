/**
 * Telemetry settings: the worker's Prometheus port (Keel's own variable) and tracing, from the
 * standard OpenTelemetry variables (`OTEL_*`). Part of the one configuration schema (config.ts).
 */
import { z } from 'zod';

const optional = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()));

/** The variables, spread into the configuration schema. */
export const telemetryEnvShape = {
  KEEL_WORKER_METRICS_PORT: z.union([z.literal('off'), z.coerce.number().int().min(0).max(65535)]).optional(),
  KEEL_WORKER_METRICS_HOST: z.string().default('127.0.0.1'),
  OTEL_SDK_DISABLED: optional,
  OTEL_TRACES_EXPORTER: optional,
  OTEL_EXPORTER_OTLP_ENDPOINT: optional,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optional,
  OTEL_EXPORTER_OTLP_PROTOCOL: optional,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: optional,
  OTEL_SERVICE_NAME: optional,
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: optional,
};

type TelemetryEnv = z.output<z.ZodObject<typeof telemetryEnvShape>>;

/** Where the worker `keel up` starts serves its metrics when `KEEL_WORKER_METRICS_PORT` is unset. */
export const launchedWorkerMetricsPort = 9464;

export interface TracingConfig {
  /** Where spans go: OTLP over HTTP, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`. */
  tracesUrl: string;
  /** `OTEL_SERVICE_NAME`; unset, each process names itself (`keel-api`, `keel-worker`). */
  serviceName: string | undefined;
  /** Prompt and completion text on model spans (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`). @default false */
  captureContent: boolean;
}

export interface TelemetryConfig {
  /**
   * The worker's `/metrics` (Keel's metrics and Temporal's SDK metrics): `KEEL_WORKER_METRICS_PORT`
   * on `KEEL_WORKER_METRICS_HOST` (default 127.0.0.1). Unset: off, so several workers on one
   * host never fight over a port.
   */
  workerMetrics: { host: string; port: number } | undefined;
  /**
   * What the worker `keel up` starts serves: `workerMetrics` when `KEEL_WORKER_METRICS_PORT` is
   * set (`off` turns it off), else port 9464 on `KEEL_WORKER_METRICS_HOST`. On by default there:
   * one worker, one port, nothing to collide with (issue 36). `keel up --cluster` gives worker
   * host _n_ this port + _n_ − 1.
   */
  launchedWorkerMetrics: { host: string; port: number } | undefined;
  /** Unset (the default): no spans leave the process. */
  tracing: TracingConfig | undefined;
}

/** Why the OTel variables cannot be used, or undefined. */
export function telemetryProblem(env: TelemetryEnv): string | undefined {
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (protocol !== undefined && protocol !== 'http/json' && protocol !== 'http/protobuf')
    return `OTLP protocol "${protocol}": Keel exports OTLP over HTTP (port 4318); use http/json or http/protobuf`;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim());
  const unknown = exporters.find((name) => !['', 'otlp', 'none'].includes(name));
  if (unknown !== undefined) return `OTEL_TRACES_EXPORTER "${unknown}" is not supported; use otlp or none`;
  return undefined;
}

const truthy = (value: string | undefined): boolean => value?.toLowerCase() === 'true';

export function telemetryConfig(env: TelemetryEnv): TelemetryConfig {
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim());
  // Off on the embedded default: on when an exporter or an endpoint is named, as the OTel SDKs read them.
  const on =
    !truthy(env.OTEL_SDK_DISABLED) &&
    !exporters.includes('none') &&
    (exporters.includes('otlp') ||
      env.OTEL_EXPORTER_OTLP_ENDPOINT !== undefined ||
      env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT !== undefined);
  const base = (env.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318').replace(/\/+$/, '');
  return {
    workerMetrics:
      env.KEEL_WORKER_METRICS_PORT === undefined || env.KEEL_WORKER_METRICS_PORT === 'off'
        ? undefined
        : { host: env.KEEL_WORKER_METRICS_HOST, port: env.KEEL_WORKER_METRICS_PORT },
    launchedWorkerMetrics:
      env.KEEL_WORKER_METRICS_PORT === 'off'
        ? undefined
        : {
            host: env.KEEL_WORKER_METRICS_HOST,
            port: env.KEEL_WORKER_METRICS_PORT ?? launchedWorkerMetricsPort,
          },
    tracing: on
      ? {
          tracesUrl: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? `${base}/v1/traces`,
          serviceName: env.OTEL_SERVICE_NAME,
          captureContent: truthy(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT),
        }
      : undefined,
  };
}
