/**
 * A real OpenTelemetry Collector for the tracing tests: the OTLP receiver and the contrib file
 * exporter, built once with the Collector Builder (ocb) into ~/.cache/keel/otelcol/<version>/
 * (docs/decisions/0121-traces-tested-against-a-real-collector.md), listening on a loopback port
 * and writing every span it receives to a JSON-lines file the test reads back.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir, mkdtemp, readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './api';

export const collectorVersion = '0.165.0';
/** The confmap providers' module versions that go with `collectorVersion`. */
const providerVersion = '1.71.0';

const manifest = (output: string): string => `dist:
  name: keel-otelcol
  description: OTLP receiver and file exporter, for Keel's tracing tests
  output_path: ${output}
receivers:
  - gomod: go.opentelemetry.io/collector/receiver/otlpreceiver v${collectorVersion}
exporters:
  - gomod: github.com/open-telemetry/opentelemetry-collector-contrib/exporter/fileexporter v${collectorVersion}
providers:
  - gomod: go.opentelemetry.io/collector/confmap/provider/envprovider v${providerVersion}
  - gomod: go.opentelemetry.io/collector/confmap/provider/fileprovider v${providerVersion}
`;

function cacheDir(): string {
  const base = process.env.XDG_CACHE_HOME ?? path.join(process.env.HOME ?? os.homedir(), '.cache');
  return path.join(base, 'keel', 'otelcol', collectorVersion);
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code) => resolve(code ?? 1));
  });
}

/** The collector binary, built on first use (about 4 minutes on two loaded cores, then cached). */
export async function ensureCollector(): Promise<string> {
  const directory = cacheDir();
  const binary = path.join(directory, 'keel-otelcol');
  if (await exists(binary)) return binary;
  await mkdir(directory, { recursive: true });
  const started = Date.now();
  const say = (line: string): void => {
    process.stderr.write(`[otelcol] ${line} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
  };
  const ticker = setInterval(() => say('still building the OpenTelemetry Collector…'), 30_000);
  try {
    say(`building the OpenTelemetry Collector ${collectorVersion} once into ${directory}`);
    const builder = path.join(directory, 'builder');
    if (!(await exists(builder))) {
      const code = await run(
        'go',
        ['install', `go.opentelemetry.io/collector/cmd/builder@v${collectorVersion}`],
        directory,
        {
          GOBIN: directory,
        },
      );
      if (code !== 0) throw new Error(`go install of the collector builder failed (exit ${code})`);
    }
    const work = await mkdtemp(path.join(directory, 'build-'));
    await writeFile(path.join(work, 'manifest.yaml'), manifest(path.join(work, 'src')));
    // The builder's own `go mod tidy` stops at a test-only module the proxy no longer serves;
    // the sources and go.mod it wrote are complete, so tidy leniently and build them here.
    await run(builder, ['--config', 'manifest.yaml', '--skip-compilation'], work);
    const source = path.join(work, 'src');
    await access(path.join(source, 'go.mod')).catch(() => {
      throw new Error('the collector builder wrote no go.mod');
    });
    await run('go', ['mod', 'tidy', '-e'], source);
    const code = await run(
      'go',
      ['build', '-trimpath', '-ldflags=-s', '-o', `${binary}.partial`, '.'],
      source,
    );
    if (code !== 0) throw new Error(`go build of the collector failed (exit ${code})`);
    await rename(`${binary}.partial`, binary);
    say('built');
    return binary;
  } finally {
    clearInterval(ticker);
  }
}

export interface StoredSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  service: string;
  attributes: Record<string, unknown>;
  status: string;
}

export interface Collector {
  /** For `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  endpoint: string;
  /** Every span the collector has written so far. */
  spans(): Promise<StoredSpan[]>;
  stop(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}

function valueOf(value: OtlpValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

const attributesOf = (list: Array<{ key: string; value: OtlpValue }> = []): Record<string, unknown> =>
  Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]));

interface ExportLine {
  resourceSpans?: Array<{
    resource?: { attributes?: Array<{ key: string; value: OtlpValue }> };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        attributes?: Array<{ key: string; value: OtlpValue }>;
        status?: { code?: string | number };
      }>;
    }>;
  }>;
}

function parseSpans(text: string): StoredSpan[] {
  const spans: StoredSpan[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    for (const resource of (JSON.parse(line) as ExportLine).resourceSpans ?? []) {
      const named = attributesOf(resource.resource?.attributes)['service.name'];
      const service = typeof named === 'string' ? named : '';
      for (const scope of resource.scopeSpans ?? [])
        for (const span of scope.spans ?? [])
          spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            service,
            attributes: attributesOf(span.attributes),
            status: String(span.status?.code ?? ''),
          });
    }
  }
  return spans;
}

async function waitForPort(url: string, child: ChildProcess, output: string[]): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the collector exited: ${output.join('').slice(-2000)}`);
    try {
      // The receiver answers any method on its path; a GET is refused with 405, which means it is up.
      await fetch(url);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  throw new Error(`the collector did not listen in 60 s: ${output.join('').slice(-2000)}`);
}

export async function startCollector(): Promise<Collector> {
  const binary = await ensureCollector();
  const directory = await mkdtemp(path.join(process.env.KEEL_TEST_DIR ?? os.tmpdir(), 'otelcol-'));
  const port = await freePort();
  const file = path.join(directory, 'traces.jsonl');
  // No telemetry of its own: its metrics port (8888) would collide with anything else running.
  await writeFile(
    path.join(directory, 'config.yaml'),
    `receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:${port}
exporters:
  file:
    path: ${file}
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
`,
  );
  const child = spawn(binary, ['--config', path.join(directory, 'config.yaml')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString('utf8')));
  const endpoint = `http://127.0.0.1:${port}`;
  await waitForPort(`${endpoint}/v1/traces`, child, output);
  return {
    endpoint,
    async spans() {
      try {
        return parseSpans(await readFile(file, 'utf8'));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
        throw error;
      }
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
