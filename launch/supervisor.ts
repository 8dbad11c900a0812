/**
 * A supervised child process: restarted with backoff when it dies unexpectedly, stopped with
 * SIGTERM then SIGKILL. Children get their own process group, so a terminal's Ctrl-C reaches
 * only the supervisor, which then stops them in order.
 */
import { type ChildProcess, spawn } from 'node:child_process';

export interface SupervisedOptions {
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Said when the process dies and is restarted. */
  report: (line: string) => void;
  /** Where its output goes: this terminal, or a log file's descriptor. @default 'inherit' */
  output?: 'inherit' | number;
  /** What asks it to stop (PostgreSQL's fast shutdown is SIGINT). @default 'SIGTERM' */
  stopSignal?: NodeJS.Signals;
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

  constructor(private options: SupervisedOptions) {}

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  start(): void {
    const { command, args, cwd, env } = this.options;
    this.#startedAt = Date.now();
    const output = this.options.output ?? 'inherit';
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', output, output], detached: true });
    this.#child = child;
    child.once('exit', (code, signal) => {
      if (this.#child === child) this.#child = undefined;
      if (this.#stopping) return;
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

  /** Stops for good: SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
  async stop(graceMs: number): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#restartTimer);
    const child = this.#child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(this.options.stopSignal ?? 'SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
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
    this.#child?.kill('SIGKILL');
  }
}
