/**
 * Holds one process for `keel up` and ends it when `keel up` ends, however `keel up` ends: even
 * SIGKILL, which no handler sees. The Temporal server, PostgreSQL and the UI server are programs
 * Keel cannot change, so each Keel-started process runs under one of these (decision 0330).
 *
 *   node watchdog.cjs <stop signal> <grace ms> <command> [args…]
 *
 * Its stdin is a pipe from `keel up` that nobody writes: end of file means `keel up` is gone, and
 * the child gets the stop signal, then SIGKILL after the grace. SIGTERM, SIGINT and SIGHUP are passed on.
 * It exits as its child did. Started as a process group leader (`detached`): once orphaned, it
 * ends with SIGKILL to its whole group, so nothing the child started outlives it either.
 * Plain JavaScript: it starts in milliseconds, without tsx.
 */
'use strict';
const { spawn } = require('node:child_process');

const [stopSignal = 'SIGTERM', graceText = '15000', command, ...args] = process.argv.slice(2);
if (command === undefined) {
  process.stderr.write('usage: watchdog.cjs <stop signal> <grace ms> <command> [args…]\n');
  process.exit(2);
}
const graceMs = Number(graceText);
const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
const running = () => child.exitCode === null && child.signalCode === null;
const pass = (signal) => {
  if (running()) child.kill(signal);
};

process.on('SIGTERM', () => pass('SIGTERM'));
process.on('SIGINT', () => pass('SIGINT'));
// In a session of its own, no terminal's hang-up reaches this process: a SIGHUP sent to it is
// meant for its child (a Keel worker reloads its extensions on one).
process.on('SIGHUP', () => pass('SIGHUP'));

/** Everything in this process group, this process last of all; the child alone when not a group leader. */
const killGroup = () => {
  try {
    process.kill(-process.pid, 'SIGKILL');
  } catch {
    pass('SIGKILL');
  }
};

let orphaned = false;
const parentGone = () => {
  if (orphaned) return;
  orphaned = true;
  pass(stopSignal);
  setTimeout(killGroup, graceMs).unref();
};
process.stdin.on('end', parentGone);
process.stdin.on('close', parentGone);
process.stdin.on('error', parentGone);
process.stdin.resume();

child.once('error', (error) => {
  process.stderr.write(`keel: cannot start ${command}: ${error.message}\n`);
  process.exit(127);
});
child.once('exit', (code, signal) => {
  process.stdin.destroy();
  // Nobody is left to read the exit status: what matters is that nothing remains.
  if (orphaned) killGroup();
  if (signal === null) process.exit(code ?? 1);
  // Dies of the same signal, so `keel up` reports what happened to the child.
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
  setTimeout(() => process.exit(1), 1_000).unref();
});
