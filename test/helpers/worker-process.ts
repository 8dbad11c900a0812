/**
 * A real `keel worker` process, for chaos tests: spawned from the CLI with the prebuilt bundle,
 * its JSON log lines collected, killed with whatever signal the scenario calls for. The same
 * harness runs a `keel api` process, for what only a process's own output shows (Node warnings).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { once } from 'node:events';
import { testEncryptionKeys } from './encryption';

const root = path.resolve(__dirname, '../..');

export interface LogLine {
  msg?: string;
  level?: number;
  [key: string]: unknown;
}

export interface WorkerProcess {
  child: ChildProcess;
  pid: number;
  logs: LogLine[];
  /** Raw output that was not a JSON log line (stack traces, SDK output). */
  output: string[];
  /** Resolves when a log line matches (or rejects after `timeoutMs`). */
  waitForLog(match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  kill(signal: NodeJS.Signals): void;
  /** Sends `signal` (when still running) and resolves with how the process exited. */
  stop(signal: NodeJS.Signals): Promise<ProcessExit>;
  /** Resolves with the exit code (null when a signal ended it). */
  exited: Promise<ProcessExit>;
}

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface WorkerProcessOptions {
  /** Configuration variables, as a worker's environment would carry them. */
  env: Record<string, string>;
  /** The `keel` command to run. @default 'worker' */
  command?: 'worker' | 'api';
  /**
   * How `keel` runs: `node` arguments before the command, and the directory.
   * @default the sources compiled once for the run (test/setup/keel-build.ts), or through tsx
   * when there is no such build or the process runs as another user (it could not read it)
   */
  program?: { args: string[]; cwd: string };
  /** How long the process may take to say it is ready (a worker without a bundle makes one). @default 60 s */
  readyTimeoutMs?: number;
  /** Run it as this uid and gid, with no supplementary groups (a root test starts an ordinary-user worker). */
  user?: { uid: number; gid: number };
}

/** The `node` arguments of the run's build of `keel` (global setup), or of the sources through tsx. */
function builtKeel(): string[] {
  const built = process.env.KEEL_TEST_KEEL_PROGRAM;
  return built === undefined ? ['--import', 'tsx', 'cli/keel.ts'] : (JSON.parse(built) as string[]);
}

export async function startWorkerProcess({
  env,
  command = 'worker',
  program: given,
  readyTimeoutMs = 60_000,
  user,
}: WorkerProcessOptions): Promise<WorkerProcess> {
  const program = given ?? {
    args: user === undefined ? builtKeel() : ['--import', 'tsx', 'cli/keel.ts'],
    cwd: root,
  };
  const child = spawn(process.execPath, [...program.args, command], {
    cwd: program.cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      TEMPORAL_ADDRESS: process.env.KEEL_TEST_TEMPORAL_ADDRESS ?? '',
      KEEL_WORKFLOW_BUNDLE: process.env.KEEL_TEST_BUNDLE ?? '',
      KEEL_LOG_FORMAT: 'json',
      KEEL_LOG_LEVEL: 'info',
      KEEL_ENCRYPTION_KEYS: testEncryptionKeys,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // libuv drops the supplementary groups (setgroups) before it changes the uid.
    ...(user === undefined ? {} : { uid: user.uid, gid: user.gid }),
  });
  const logs: LogLine[] = [];
  const output: string[] = [];
  const waiters = new Set<() => void>();
  const exited: Promise<ProcessExit> = once(child, 'exit').then(([code, signal]) => ({
    code: code as number | null,
    signal: signal as NodeJS.Signals | null,
  }));
  let buffered = '';
  const onData = (chunk: Buffer): void => {
    buffered += chunk.toString('utf8');
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line) as LogLine);
      } catch {
        if (line.trim() !== '') output.push(line);
      }
    }
    for (const wake of waiters) wake();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const worker: WorkerProcess = {
    child,
    pid: child.pid!,
    logs,
    output,
    exited,
    kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    stop(signal) {
      worker.kill(signal);
      return exited;
    },
    waitForLog(match, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const found = logs.find(match);
          if (found === undefined) return;
          cleanup();
          resolve(found);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(
            new Error(
              `worker ${child.pid}: no matching log line in ${timeoutMs} ms; output: ${output.slice(-20).join('\n')}`,
            ),
          );
        }, timeoutMs);
        const cleanup = (): void => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        void exited.then(() => {
          check();
          if (waiters.has(check)) {
            cleanup();
            reject(new Error(`worker ${child.pid} exited; output: ${output.slice(-20).join('\n')}`));
          }
        });
        check();
      });
    },
  };
  await worker.waitForLog((line) => line.msg === `${command} ready`, readyTimeoutMs);
  return worker;
}

/** Starts worker processes and makes sure none outlives the test (or the file). */
export class WorkerFleet {
  readonly #all: WorkerProcess[] = [];

  /** `env` is read at each start (a harness fills in its configuration in `beforeAll`). */
  constructor(readonly env: () => Record<string, string>) {}

  async start(extra: Record<string, string> = {}): Promise<WorkerProcess> {
    const worker = await startWorkerProcess({ env: { ...this.env(), ...extra } });
    this.#all.push(worker);
    return worker;
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.#all.map((worker) => worker.stop('SIGKILL')));
  }
}
