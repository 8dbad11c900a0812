/** The command runner's own program, apart from the TypeScript that starts it (command-runner.ts). */

/**
 * The runner's program (plain JavaScript, run with `node -e`: it must start without this
 * project's TypeScript loader, and small). Per request: spawn in its own process group, write the
 * inputs to fds 3, 4, … (after the arguments, when they go by pipe), capture interleaved stdout
 * and stderr up to a cap while they stream, SIGTERM then SIGKILL the group at the timeout or on
 * abort, SIGKILL it at once when the disk guard trips (a writer given grace writes on).
 */
export const runnerSource = `
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
