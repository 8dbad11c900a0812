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

/**
 * The runner's program (plain JavaScript, run with `node -e`: it must start without this
 * project's TypeScript loader, and small). Per request: spawn in its own process group, write the
 * inputs to fds 3, 4, … (after the arguments, when they go by pipe), capture interleaved stdout
 * and stderr up to a cap while they stream, SIGTERM then SIGKILL the group at the timeout or on
 * abort, SIGKILL it at once when the disk guard trips (a writer given grace writes on).
 */
const runnerSource = `
'use strict';
const { execFile, spawn } = require('node:child_process');
const { statfs } = require('node:fs');
const running = new Map();
/** Free space is one cheap call: checked often, as a fast writer fills a disk in a second. */
const freeEveryMs = 25;
/** The workspace's usage is a walk: at most a fifth of the time goes to it, unless called for. */
const usageFloorMs = 250;
/**
 * The first walk waits this long, so the many short commands start no \`du\`; sooner if the
 * filesystem grows by \`earlyWalkBytes\` meanwhile.
 */
const firstWalkMs = 100;
const earlyWalkBytes = 16 * 1024 * 1024;
/** Started below the reserve, a command may still see free space move this much (others' writes). */
const belowReserveSlackBytes = 8 * 1024 * 1024;
const belowReserveSlackInodes = 1024;
/**
 * The workspace's inodes are walked only when the filesystem's own count (statfs, every poll) has
 * grown enough since the last walk that the workspace may be past its quota: a command that makes
 * few files never walks for them.
 */
const earlyWalkInodes = 10000;
function watchDisk(guard, path, breach) {
  let done = false;
  let freeTimer;
  let usageTimer;
  let measuring = false;
  /** The filesystem's used bytes at the last statfs, and at the start of the last walk. */
  let fsUsed = null;
  let fsUsedAtWalk = null;
  let walked = null;
  /**
   * A command that starts past a bound may still run (to delete files, say): it is stopped when it
   * goes further, below the free space it found (less a little slack) or above the usage.
   */
  let freeFloor = null;
  let inodeFloor = null;
  let usageCeiling = null;
  /** The same for inodes: the filesystem's used inodes now, at the command's start and at the last walk. */
  let inodesUsed = null;
  let inodesAtStart = null;
  let inodesAtWalk = null;
  let walkedInodes = null;
  let inodeCeiling = null;
  let countingInodes = false;
  let nextInodeWalk = 0;
  const stop = (why) => {
    done = true;
    breach(why);
  };
  const measure = () => {
    if (measuring || done) return;
    measuring = true;
    clearTimeout(usageTimer);
    const started = Date.now();
    const fsUsedAtStart = fsUsed;
    // du walks with descriptors and follows no link (-P), on the workspace's filesystem only (-x).
    execFile('du', ['-s', '-x', '-P', '-B1', '--', guard.workspace], { env: { PATH: path } }, (error, stdout) => {
      measuring = false;
      if (done) return;
      const usedBytes = Number.parseInt(String(stdout), 10);
      if (Number.isFinite(usedBytes)) {
        usageCeiling ??= Math.max(guard.quotaBytes, usedBytes);
        if (usedBytes > usageCeiling) return stop({ kind: 'quota', usedBytes });
        walked = usedBytes;
        fsUsedAtWalk = fsUsedAtStart;
      }
      usageTimer = setTimeout(measure, Math.max(usageFloorMs, 4 * (Date.now() - started)));
    });
  };
  const countInodes = () => {
    if (countingInodes || done || Date.now() < nextInodeWalk) return;
    countingInodes = true;
    const started = Date.now();
    const atWalk = inodesUsed;
    execFile('du', ['-s', '-x', '-P', '--inodes', '--', guard.workspace], { env: { PATH: path } }, (error, stdout) => {
      countingInodes = false;
      if (done) return;
      const count = Number.parseInt(String(stdout), 10);
      if (Number.isFinite(count)) {
        // Started past the quota, a command may run on (to delete files); what it made since it
        // started (as the filesystem counts, others' files included) is not its allowance.
        inodeCeiling ??= Math.max(guard.quotaInodes, count - Math.max(0, atWalk - inodesAtStart));
        if (count > inodeCeiling) return stop({ kind: 'workspaceInodes', usedInodes: count });
        walkedInodes = count;
        inodesAtWalk = atWalk;
      }
      // At most half the time goes to walking, however fast the filesystem grows.
      nextInodeWalk = Date.now() + (Date.now() - started);
    });
  };
  const free = () => statfs(guard.workspace, (error, stats) => {
    if (done) return;
    if (!error) {
      const freeBytes = stats.bavail * stats.bsize;
      freeFloor ??= Math.min(guard.reserveBytes, freeBytes - belowReserveSlackBytes);
      if (freeBytes < freeFloor) return stop({ kind: 'reserve', freeBytes });
      // Inodes run out with no byte written (millions of empty files); btrfs reports none (0).
      if (stats.files > 0) {
        inodeFloor ??= Math.min(guard.reserveInodes, stats.ffree - belowReserveSlackInodes);
        if (stats.ffree < inodeFloor) return stop({ kind: 'inodes', freeInodes: stats.ffree });
        inodesUsed = stats.files - stats.ffree;
        inodesAtStart ??= inodesUsed;
        inodesAtWalk ??= inodesUsed;
        const made = inodesUsed - inodesAtWalk;
        const early = Math.min(earlyWalkInodes, Math.ceil(guard.quotaInodes / 2));
        if (walkedInodes === null ? made > early : walkedInodes + made > inodeCeiling) countInodes();
      }
      const first = fsUsed === null;
      fsUsed = (stats.blocks - stats.bfree) * stats.bsize;
      if (first) {
        fsUsedAtWalk = fsUsed;
        usageTimer = setTimeout(measure, firstWalkMs);
      }
      // The filesystem's growth since the last walk bounds the workspace's: past the quota, walk now.
      const grown = fsUsed - fsUsedAtWalk;
      if (walked === null ? grown > earlyWalkBytes : walked + grown > usageCeiling) measure();
    }
    freeTimer = setTimeout(free, freeEveryMs);
  });
  free();
  return () => {
    done = true;
    clearTimeout(freeTimer);
    clearTimeout(usageTimer);
  };
}
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
function start({ id, launch, timeoutMs, killGraceMs, outputChars, guard }) {
  let child;
  // bubblewrap reads options from its --args pipe, and the command only from its own command line.
  const split = launch.argsByPipe ? launch.args.indexOf('--') : -1;
  const piped = split < 0 ? null : launch.args.slice(0, split);
  const inputs = piped === null ? launch.inputs : [piped.map((arg) => arg + '\\0').join(''), ...launch.inputs];
  const args = piped === null ? launch.args : ['--args', '3', ...launch.args.slice(split)];
  try {
    child = spawn(launch.file, args, {
      cwd: launch.cwd,
      env: launch.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', ...inputs.map(() => 'pipe')],
    });
  } catch (error) {
    reply({ id, error: describe(error) });
    return;
  }
  inputs.forEach((text, index) => {
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
  let diskStop = null;
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
  const unwatch = guard === null ? () => {} : watchDisk(guard, launch.env.PATH || '/usr/bin:/bin', (why) => {
    diskStop = why;
    if (child.pid !== undefined) killGroup(child.pid, 'SIGKILL');
  });
  running.set(id, {
    child,
    abort: () => {
      aborted = true;
      stop();
    },
  });
  child.on('error', (error) => {
    clearTimeout(timer);
    unwatch();
    running.delete(id);
    reply({ id, error: describe(error) });
  });
  child.on('close', (exitCode, signal) => {
    clearTimeout(timer);
    unwatch();
    if (!running.delete(id)) return;
    reply({ id, result: { exitCode, signal, output, totalChars, timedOut, aborted, diskStop } });
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
