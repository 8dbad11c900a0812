/**
 * LangGraph's Agent Server as its own CLI runs it for development: `langgraph dev` (the
 * `langgraph-cli[inmem]` package from PyPI, in-memory runtime, no browser, loopback only) serving
 * `langgraph/agent.py`, a prebuilt tool-calling agent. The virtualenv is made once in
 * `~/.cache/keel/langgraph-server/<version>/` from a requirements file that pins every package
 * (decision 0150); the server's JSON logs give each run's server-side times.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureVenv } from '../../test/helpers/python-venv';

/** The pinned `langgraph-cli`; also the cache folder's version. */
export const langgraphCliVersion = '0.4.40';

const agentDir = path.join(__dirname, 'langgraph');

/**
 * Runs the server takes at once. `langgraph dev --help` documents 10 as the default, but the CLI
 * passes 1 when the flag is absent (langgraph-api 0.16.7, `run_server`); 10 is the documented
 * default and what the deployed server runs, so it is set explicitly.
 */
export const defaultJobs = 10;

/** One run as the server logged it when the run ended ("Background run succeeded"). */
export interface LanggraphRunRecord {
  run_id: string;
  thread_id: string;
  /** When the API created the run, a worker took it, and the run ended (epoch milliseconds). */
  created_ms: number;
  started_ms: number;
  ended_ms: number;
}

export interface LanggraphServer {
  url: string;
  /** The `langgraph dev` process: the root of every process the server runs. */
  pid: number;
  /** Runs that ended, in the order the server logged them. */
  runs: LanggraphRunRecord[];
  /** The server's last lines of output, for error messages. */
  output: string[];
  stop(): Promise<void>;
}

export interface LanggraphServerOptions {
  /** The Anthropic API the agent's `ChatAnthropic` talks to (the fake). */
  anthropicUrl: string;
  anthropicKey: string;
  port: number;
  jobs?: number;
  onProgress?: (line: string) => void;
}

/** The virtualenv's `bin`, made once (pip prints what it collects and installs as it goes). */
export function ensureLanggraphVenv(onProgress?: (line: string) => void): Promise<string> {
  return ensureVenv({
    name: 'langgraph-server',
    requirement: `langgraph-cli[inmem]==${langgraphCliVersion}`,
    requirementsFile: path.join(agentDir, 'requirements.txt'),
    ...(onProgress === undefined
      ? {}
      : {
          onProgress: (line) => /^(making|Collecting|Installing|Successfully)/.test(line) && onProgress(line),
        }),
  });
}

/** Epoch milliseconds of an ISO time with microseconds (`Date.parse` would drop the fraction). */
function millisecondsOf(iso: unknown): number {
  if (typeof iso !== 'string') return Number.NaN;
  const fraction = /\.(\d+)/.exec(iso)?.[1] ?? '0';
  return Date.parse(iso.replace(/\.\d+/, '')) + Number(`0.${fraction}`) * 1000;
}

/** A run record from one JSON log line, when the line is a run's end. */
export function runRecordOf(line: string): LanggraphRunRecord | undefined {
  if (!line.includes('Background run succeeded')) return undefined;
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (entry.event !== 'Background run succeeded') return undefined;
  return {
    run_id: String(entry.run_id),
    thread_id: String(entry.thread_id),
    created_ms: millisecondsOf(entry.run_created_at),
    started_ms: millisecondsOf(entry.run_started_at),
    ended_ms: millisecondsOf(entry.run_ended_at),
  };
}

export async function startLanggraphServer(options: LanggraphServerOptions): Promise<LanggraphServer> {
  const bin = await ensureLanggraphVenv(options.onProgress);
  // The dev server keeps its state in memory and pickles it into `.langgraph_api/` in its working
  // directory every 10 s: a directory of its own, removed afterwards.
  const dir = await mkdtemp(path.join(os.tmpdir(), 'keel-bench-langgraph-'));
  const config = path.join(dir, 'langgraph.json');
  await writeFile(
    config,
    JSON.stringify({ dependencies: [agentDir], graphs: { agent: path.join(agentDir, 'agent.py:graph') } }),
  );
  const child: ChildProcess = spawn(
    path.join(bin, 'python'),
    [
      '-m',
      'langgraph_cli',
      'dev',
      '--config',
      config,
      '--no-browser',
      '--no-reload',
      '--host',
      '127.0.0.1',
      '--port',
      String(options.port),
      '--n-jobs-per-worker',
      String(options.jobs ?? defaultJobs),
    ],
    {
      cwd: dir,
      // Its own process group, so stopping it ends every process it started.
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        ANTHROPIC_BASE_URL: options.anthropicUrl,
        ANTHROPIC_API_KEY: options.anthropicKey,
        LOG_JSON: 'true',
        PYTHONDONTWRITEBYTECODE: '1',
        // Nothing leaves the machine: no version check, no CLI analytics, no LangSmith tracing.
        LANGGRAPH_NO_VERSION_CHECK: 'true',
        LANGGRAPH_CLI_NO_ANALYTICS: '1',
        LANGSMITH_TRACING: 'false',
        LANGCHAIN_TRACING_V2: 'false',
      },
    },
  );
  const runs: LanggraphRunRecord[] = [];
  const output: string[] = [];
  let pending = '';
  const onData = (chunk: Buffer): void => {
    const lines = (pending + chunk.toString('utf8')).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (line.trim() === '') continue;
      const record = runRecordOf(line);
      if (record !== undefined) runs.push(record);
      output.push(line);
      if (output.length > 40) output.shift();
    }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  let exited = false;
  const exit = once(child, 'exit').then(() => {
    exited = true;
  });
  const url = `http://127.0.0.1:${options.port}`;
  const stop = async (): Promise<void> => {
    if (!exited) {
      process.kill(-child.pid!, 'SIGTERM');
      const timer = setTimeout(() => !exited && process.kill(-child.pid!, 'SIGKILL'), 15_000);
      await exit;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 120_000;
  for (;;) {
    const ok = await fetch(`${url}/ok`).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) break;
    if (exited || Date.now() > deadline) {
      await stop();
      throw new Error(
        `langgraph dev ${exited ? 'exited before it answered' : 'did not answer in 120 s'}:\n${output.join('\n')}`,
      );
    }
    await sleep(200);
  }
  return { url, pid: child.pid!, runs, output, stop };
}
