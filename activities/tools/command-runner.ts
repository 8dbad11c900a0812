/**
 * Where tool commands are spawned: a small Node process per worker (the runner), started on the
 * first command, that spawns each one and hands back its result (decision 0270). libuv (Node 20)
 * spawns with `fork`, whose cost grows with the parent's page tables: from a ~450 MiB worker it
 * held the worker's main thread ~5 ms per command, from the ~40 MiB runner well under one. The
 * command itself is exactly what it was (the same file, arguments, environment and pipes); the
 * runner gets no environment of its own, and it kills every command it started and exits when the
 * worker goes (its IPC channel closes), as bubblewrap's `--die-with-parent` then ends the sandbox.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { limits } from '../../common/limits';
import type { SandboxedCommand } from './sandbox';

/** After SIGTERM, how long a command gets before SIGKILL. */
const killGraceMs = 2_000;

export interface CommandResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  totalChars: number;
  timedOut: boolean;
  aborted: boolean;
}

interface RunRequest {
  id: number;
  launch: SandboxedCommand;
  timeoutMs: number;
  killGraceMs: number;
  outputChars: number;
}

type RunnerMessage =
  | { id: number; result: CommandResult }
  | {
      id: number;
      error: { message: string; code?: string; syscall?: string; errno?: number; path?: string };
    };

/**
 * The runner's program (plain JavaScript, run with `node -e`: it must start without this
 * project's TypeScript loader, and small). Per request: spawn in its own process group, write the
 * inputs to fds 3, 4, …, capture interleaved stdout and stderr up to a cap while they stream,
 * SIGTERM then SIGKILL the group at the timeout or on abort.
 */
const runnerSource = `
'use strict';
const { spawn } = require('node:child_process');
const running = new Map();
function killGroup(pid, signal) {
  try { process.kill(-pid, signal); } catch {}
}
function reply(message) {
  if (process.connected) process.send(message);
}
function describe(error) {
  const { message, code, syscall, errno, path } = error;
  return { message: String(message), code, syscall, errno, path };
}
function start({ id, launch, timeoutMs, killGraceMs, outputChars }) {
  let child;
  try {
    child = spawn(launch.file, launch.args, {
      cwd: launch.cwd,
      env: launch.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', ...launch.inputs.map(() => 'pipe')],
    });
  } catch (error) {
    reply({ id, error: describe(error) });
    return;
  }
  launch.inputs.forEach((text, index) => {
    const pipe = child.stdio[3 + index];
    if (pipe) {
      pipe.on('error', () => {});
      pipe.end(text);
    }
  });
  let output = '';
  let totalChars = 0;
  let timedOut = false;
  let aborted = false;
  const collect = (chunk) => {
    const text = chunk.toString('utf8');
    totalChars += text.length;
    if (output.length < outputChars) output += text.slice(0, outputChars - output.length);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const stop = () => {
    if (child.pid === undefined) return;
    killGroup(child.pid, 'SIGTERM');
    setTimeout(() => killGroup(child.pid, 'SIGKILL'), killGraceMs).unref();
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, timeoutMs);
  running.set(id, {
    child,
    abort: () => {
      aborted = true;
      stop();
    },
  });
  child.on('error', (error) => {
    clearTimeout(timer);
    running.delete(id);
    reply({ id, error: describe(error) });
  });
  child.on('close', (exitCode, signal) => {
    clearTimeout(timer);
    if (!running.delete(id)) return;
    reply({ id, result: { exitCode, signal, output, totalChars, timedOut, aborted } });
  });
}
process.on('message', (message) => {
  if (message.abort !== undefined) running.get(message.abort)?.abort();
  else start(message);
});
process.on('disconnect', () => {
  for (const { child } of running.values()) if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
  process.exit(0);
});
`;

interface Pending {
  resolve: (result: CommandResult) => void;
  reject: (error: Error) => void;
}

class CommandRunner {
  #child: ChildProcess | undefined;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;

  run(launch: SandboxedCommand, options: { timeoutMs: number; signal: AbortSignal }): Promise<CommandResult> {
    const child = this.#start();
    const id = ++this.#nextId;
    return new Promise<CommandResult>((resolve, reject) => {
      const onAbort = (): void => {
        if (child.connected) child.send({ abort: id });
      };
      const settle = (): void => {
        options.signal.removeEventListener('abort', onAbort);
        this.#pending.delete(id);
        this.#holdProcess();
      };
      this.#pending.set(id, {
        resolve: (result) => {
          settle();
          resolve(result);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      this.#holdProcess();
      const request: RunRequest = {
        id,
        launch,
        timeoutMs: options.timeoutMs,
        killGraceMs,
        outputChars: limits.toolOutputChars,
      };
      child.send(request, (error) => {
        if (error) this.#pending.get(id)?.reject(new Error(`the command runner is gone: ${error.message}`));
      });
      options.signal.addEventListener('abort', onAbort, { once: true });
      if (options.signal.aborted) onAbort();
    });
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** The runner keeps this process alive only while a command is running, as a child would. */
  #holdProcess(): void {
    if (this.#pending.size > 0) this.#child?.channel?.ref();
    else this.#child?.channel?.unref();
  }

  #start(): ChildProcess {
    if (this.#child !== undefined) return this.#child;
    // No environment: the runner needs none, and each command brings its own. A session of its
    // own, as each command has: a Ctrl-C or SIGTERM to the worker's process group is the worker's
    // to handle (it drains, and its tools finish or are stopped), not the runner's.
    const child = spawn(process.execPath, ['-e', runnerSource], {
      cwd: '/',
      env: {},
      detached: true,
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    child.unref();
    child.on('message', (message: RunnerMessage) => {
      const pending = this.#pending.get(message.id);
      if (pending === undefined) return;
      if ('result' in message) pending.resolve(message.result);
      else pending.reject(Object.assign(new Error(message.error.message), message.error));
    });
    const gone = (why: string): void => {
      if (this.#child === child) this.#child = undefined;
      for (const pending of [...this.#pending.values()])
        pending.reject(new Error(`the command runner ${why}`));
    };
    child.on('error', (error) => gone(`failed: ${error.message}`));
    child.on('exit', (code, signal) => gone(`exited (${signal ?? `code ${code}`})`));
    this.#child = child;
    return child;
  }
}

const runner = new CommandRunner();

/** The running runner's process id, if one is running (for tests). */
export function commandRunnerPid(): number | undefined {
  return runner.pid;
}

/** Runs a prepared command in the worker's runner, capturing interleaved stdout and stderr up to a cap. */
export function runCommand(
  launch: SandboxedCommand,
  options: { timeoutMs: number; signal: AbortSignal },
): Promise<CommandResult> {
  return runner.run(launch, options);
}
