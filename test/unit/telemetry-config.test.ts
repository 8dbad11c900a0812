import { Writable } from 'node:stream';
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { ConfigError, parseConfig } from '../../platform/config';
import { createLogger } from '../../launch/env';
import { parsePrometheusText } from '../helpers/prometheus';

const telemetry = (env: Record<string, string>) => parseConfig(env, '/srv/keel').telemetry;

describe('telemetry configuration', () => {
  it('exports no traces and serves no worker metrics by default, but the worker `keel up` starts does', () => {
    expect(telemetry({})).toEqual({
      workerMetrics: undefined,
      launchedWorkerMetrics: { host: '127.0.0.1', port: 9464 },
      tracing: undefined,
    });
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, 'http://collector:4318/v1/traces'],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://tempo:4318/v1/traces' }, 'http://tempo:4318/v1/traces'],
    [{ OTEL_TRACES_EXPORTER: 'otlp' }, 'http://localhost:4318/v1/traces'],
  ])('turns tracing on with the standard variables %j', (env, url) => {
    expect(telemetry(env).tracing).toEqual({ tracesUrl: url, serviceName: undefined, captureContent: false });
  });

  it.each([
    { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' },
    { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' },
  ])('keeps tracing off when told to: %j', (env) => {
    expect(telemetry(env).tracing).toBeUndefined();
  });

  it('puts prompts on spans only when the operator opts in, and names the service as told', () => {
    expect(
      telemetry({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_SERVICE_NAME: 'agents',
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
      }).tracing,
    ).toMatchObject({ serviceName: 'agents', captureContent: true });
  });

  it('refuses an OTLP protocol or exporter Keel does not speak, in one line', () => {
    expect(() => parseConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, '/')).toThrow(ConfigError);
    expect(() => parseConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, '/')).toThrow(/OTLP over HTTP/);
    expect(() => parseConfig({ OTEL_TRACES_EXPORTER: 'zipkin' }, '/')).toThrow(/zipkin/);
  });

  it('serves worker metrics on loopback when a port is named, and refuses a bad port', () => {
    expect(telemetry({ KEEL_WORKER_METRICS_PORT: '9464' }).workerMetrics).toEqual({
      host: '127.0.0.1',
      port: 9464,
    });
    expect(telemetry({ KEEL_WORKER_METRICS_PORT: '9470' }).launchedWorkerMetrics).toEqual({
      host: '127.0.0.1',
      port: 9470,
    });
    expect(() => parseConfig({ KEEL_WORKER_METRICS_PORT: '70000' }, '/')).toThrow(ConfigError);
  });

  it('serves none, even under keel up, when the port is off', () => {
    expect(telemetry({ KEEL_WORKER_METRICS_PORT: 'off' })).toMatchObject({
      workerMetrics: undefined,
      launchedWorkerMetrics: undefined,
    });
  });
});

describe('log lines inside a span', () => {
  it('carry its trace_id and span_id, and lines outside carry none', () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
        done();
      },
    });
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    const provider = new BasicTracerProvider();
    trace.setGlobalTracerProvider(provider);
    try {
      const logger = createLogger({ log: { level: 'info', format: 'json' } }, 'test', sink);
      logger.info('outside');
      const ids = trace.getTracer('test').startActiveSpan('work', (span) => {
        logger.info('inside');
        span.end();
        return span.spanContext();
      });
      expect(lines.map((line) => [line.msg, line.trace_id, line.span_id])).toEqual([
        ['outside', undefined, undefined],
        ['inside', ids.traceId, ids.spanId],
      ]);
    } finally {
      trace.disable();
      context.disable();
    }
  });
});

describe('the Prometheus text parser the metric tests rely on', () => {
  it('reads names, escaped labels and values, and refuses a line that is not a sample', () => {
    const samples = parsePrometheusText(
      '# HELP x_total a counter\n# TYPE x_total counter\nx_total{route="/a",note="say \\"hi\\""} 3\nup 1\n',
    );
    expect(samples).toEqual([
      { name: 'x_total', labels: { route: '/a', note: 'say "hi"' }, value: 3 },
      { name: 'up', labels: {}, value: 1 },
    ]);
    expect(() => parsePrometheusText('not a sample line at all')).toThrow(/not a Prometheus sample/);
  });
});
