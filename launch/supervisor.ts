/**
 * A supervised child process: restarted with backoff when it dies unexpectedly, stopped with
 * its stop signal then SIGKILL. Each runs under a watchdog (`watchdog.cjs`, decision 0330) in a
 * process group of its own: a terminal's Ctrl-C reaches only `keel up`, which stops them in
 * order, and when `keel up` dies without stopping them (SIGKILL, a crash) the watchdog's pipe
 * closes and it stops its child. Killing is by process group, so nothing under it survives.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../platform/package-root';

/** The exit code of a process that refuses to start (a taken port): restarting it cannot help. */
export const refusedExitCode = 78;

/** Not code the build compiles: at the package's root in the sources and in the build alike. */
const watchdogPath = path.join(packageRoot, 'launch', 'watchdog.cjs');

/** `command args` run under the watchdog, which gives the child `stopSignal` and then SIGKILL after `graceMs` once its parent is gone. */
export function underWatchdog(
  command: string,
  args: string[],
  stopSignal: NodeJS.Signals,
  graceMs: number,
): { command: string; args: string[] } {
  return { command: process.execPath, args: [watchdogPath, stopSignal, String(graceMs), command, ...args] };
}

/**
 * The exit code a launcher returns once its shutdown, begun by a signal or a failure at any await,
 * has stopped everything: `shuttingDown` is read again each 200 ms, as it is set from handlers.
 */
export function whenShutDown(shuttingDown: () => Promise<number> | undefined): Promise<number> {
  return new Promise<number>((resolve) => {
    const check = setInterval(() => {
      const done = shuttingDown();
      if (done === undefined) return;
      clearInterval(check);
      void done.then(resolve);
    }, 200);
  });
}

/** SIGKILL to a watchdog's whole process group: the watchdog and everything it started. */
export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // ESRCH: nothing of the group is left.
  }
}

export interface SupervisedOptions {
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Said when the process dies and is restarted. */
  report: (line: string) => void;
  /**
   * Where its output goes: this terminal, a log file's descriptor, or a function that relays it
   * (so that `keel up` notices when its own output is gone). @default 'inherit'
   */
  output?: 'inherit' | number | ((chunk: Buffer) => void);
  /** What asks it to stop (PostgreSQL's fast shutdown is SIGINT). @default 'SIGTERM' */
  stopSignal?: NodeJS.Signals;
  /** How long it may take to stop once `keel up` is gone, before SIGKILL. @default 20 s */
  graceMs?: number;
  /** Called when it exits with `refusedExitCode`; it is not restarted. */
  onRefused?: () => void;
}

const maxBackoffMs = 30_000;
/** A process that ran this long before dying gets its backoff reset. */
const healthyAfterMs = 60_000;

export class Supervised {
  #child: ChildProcess | undefined;
  #stopping = false;
  #backoffMs = 1_000;
  #startedAt = 0;
  #restartTimer: NodeJS.Timeout | undefined;
  restarts = 0;
  /** Set when it refused to start. */
  refused = false;

  constructor(private options: SupervisedOptions) {}

  /** The watchdog's pid: what `stop` and `kill` signal. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /**
   * The program's own pid (the watchdog's one child), once the watchdog has started it: what
   * Temporal's poller identity and `ps` name. Read from Linux's /proc, as bubblewrap needs Linux.
   */
  get programPid(): number | undefined {
    const watchdog = this.#child?.pid;
    if (watchdog === undefined) return undefined;
    try {
      const [first] = readFileSync(`/proc/${watchdog}/task/${watchdog}/children`, 'utf8').trim().split(' ');
      return first === undefined || first === '' ? undefined : Number(first);
    } catch {
      return undefined;
    }
  }

  start(): void {
    const {
      command,
      args,
      cwd,
      env,
      output = 'inherit',
      stopSignal = 'SIGTERM',
      graceMs = 20_000,
    } = this.options;
    this.#startedAt = Date.now();
    const watched = underWatchdog(command, args, stopSignal, graceMs);
    const stdio = typeof output === 'function' ? 'pipe' : output;
    const child = spawn(watched.command, watched.args, {
      cwd,
      env,
      stdio: ['pipe', stdio, stdio],
      detached: true,
    });
    // The pipe is only ever closed (by this process's end); a write error is not ours to raise.
    child.stdin?.on('error', () => undefined);
    if (typeof output === 'function') {
      child.stdout?.on('data', output);
      child.stderr?.on('data', output);
    }
    this.#child = child;
    child.once('exit', (code, signal) => {
      // Whatever the child left in its group (the watchdog's child when the watchdog was killed).
      killGroup(child);
      if (this.#child === child) this.#child = undefined;
      if (this.#stopping) return;
      if (code === refusedExitCode) {
        this.refused = true;
        this.options.report(`${this.options.name} refused to start (see above)`);
        this.options.onRefused?.();
        return;
      }
      if (Date.now() - this.#startedAt > healthyAfterMs) this.#backoffMs = 1_000;
      const how = signal === null ? `exit code ${code}` : signal;
      this.options.report(
        `${this.options.name} stopped unexpectedly (${how}); restarting in ${this.#backoffMs / 1000} s`,
      );
      this.#restartTimer = setTimeout(() => {
        this.restarts++;
        this.start();
      }, this.#backoffMs);
      this.#backoffMs = Math.min(this.#backoffMs * 2, maxBackoffMs);
    });
  }

  /** Stops for good: the stop signal, then SIGKILL to its group if it has not exited after `graceMs`. */
  async stop(graceMs: number): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#restartTimer);
    const child = this.#child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(this.options.stopSignal ?? 'SIGTERM');
    const timer = setTimeout(() => killGroup(child), graceMs);
    await exited;
    clearTimeout(timer);
  }

  /**
   * Replaces the process with a new one (a deploy): asks it to stop as `stop` does, waits for it,
   * and starts it again, with `env` from now on when given. Resolves once the new one is spawned.
   */
  async restart(graceMs: number, env?: NodeJS.ProcessEnv): Promise<void> {
    await this.stop(graceMs);
    if (env !== undefined) this.options = { ...this.options, env };
    this.#stopping = false;
    this.start();
  }

  /** For a forced exit: no waiting. */
  kill(): void {
    this.#stopping = true;
    clearTimeout(this.#restartTimer);
    if (this.#child !== undefined) killGroup(this.#child);
  }
}
