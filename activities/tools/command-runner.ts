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
import { runnerSource } from './command-runner-source';

/** One sandboxed command: the program to spawn, and what to write to its fds 3, 4, … */
export interface SandboxedCommand {
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Contents for extra pipes, from fd 3 upwards (bubblewrap reads them while it sets up). */
  inputs: string[];
  /**
   * Hand the options in `args` (those before `--`) to the program through a pipe instead of its
   * command line (bubblewrap's `--args 3`; `inputs` then start at fd 4): the sandbox's pid 1 shows
   * no host path, only the command after `--`.
   */
  argsByPipe?: boolean;
}

/** After SIGTERM, how long a command gets before SIGKILL. */
const killGraceMs = 2_000;

/**
 * Bounds on the disk a command may take, checked while it runs (decision 0327): the workspace's
 * usage (`du`, no link followed, one filesystem) and the free space of its filesystem (`statfs`);
 * the same for inodes (decisions 0391, 0500).
 */
export interface DiskGuard {
  /** The workspace on the host. */
  workspace: string;
  quotaBytes: number;
  reserveBytes: number;
  /** Free inodes kept on the filesystem (an empty file takes no byte, but an inode). */
  reserveInodes: number;
  /** Inodes (files, directories, links) the workspace may hold (decision 0500). */
  quotaInodes: number;
}

/** Why the runner stopped a command for its disk use, with the figure it saw. */
export type DiskStop =
  | { kind: 'quota'; usedBytes: number }
  | { kind: 'reserve'; freeBytes: number }
  | { kind: 'inodes'; freeInodes: number }
  | { kind: 'workspaceInodes'; usedInodes: number };

export interface CommandResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  totalChars: number;
  timedOut: boolean;
  aborted: boolean;
  /** Set when the disk guard killed the command. */
  diskStop: DiskStop | null;
}

interface RunRequest {
  id: number;
  launch: SandboxedCommand;
  timeoutMs: number;
  killGraceMs: number;
  outputChars: number;
  guard: DiskGuard | null;
}

type RunnerMessage =
  | { id: number; result: CommandResult }
  | {
      id: number;
      error: { message: string; code?: string; syscall?: string; errno?: number; path?: string };
    };

export interface RunOptions {
  timeoutMs: number;
  signal: AbortSignal;
  guard?: DiskGuard;
}

interface Pending {
  resolve: (result: CommandResult) => void;
  reject: (error: Error) => void;
}

class CommandRunner {
  #child: ChildProcess | undefined;
  readonly #pending = new Map<number, Pending>();
  #nextId = 0;

  run(launch: SandboxedCommand, options: RunOptions): Promise<CommandResult> {
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
        guard: options.guard ?? null,
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

  /**
   * Ends the runner and waits for it (at most `timeoutMs`): it kills what it still runs and exits
   * when its channel closes. In a session of its own, it is beyond the reach of a signal to the
   * worker's process group, so a stopping worker sees it gone rather than leaving it to notice.
   */
  async stop(timeoutMs = killGraceMs + 1_000): Promise<void> {
    const child = this.#child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.disconnect();
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    await exited;
    clearTimeout(timer);
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

/** Ends this process's command runner, if one runs, and waits for it: for a stopping worker. */
export function stopCommandRunner(): Promise<void> {
  return runner.stop();
}

/** The running runner's process id, if one is running (for tests). */
export function commandRunnerPid(): number | undefined {
  return runner.pid;
}

/**
 * Runs a prepared command in the worker's runner, capturing interleaved stdout and stderr up to a
 * cap; with a `guard`, killed if it takes the workspace past its quota (bytes or inodes) or the disk
 * into its reserve.
 */
export function runCommand(launch: SandboxedCommand, options: RunOptions): Promise<CommandResult> {
  return runner.run(launch, options);
}
