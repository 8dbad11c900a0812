/**
 * The supervisor and its watchdog (decision 0330): a process held by a watchdog stops when the
 * watchdog's parent is gone, even by SIGKILL, along with whatever it started; a process that
 * refuses to start is not restarted; its program's own pid is known, and a SIGHUP reaches it.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { refusedExitCode, Supervised } from '../../launch/supervisor';
import { descendants, isAlive } from '../helpers/process-tree';

const watchdog = path.resolve(__dirname, '../../launch/watchdog.cjs');

/** A parent that holds `command` under a watchdog, as `keel up` does, and then only waits. */
function parentHolding(stopSignal: string, graceMs: number, command: string[]) {
  const script = `
    const { spawn } = require('node:child_process');
    const held = spawn(process.execPath, ${JSON.stringify([watchdog, stopSignal, String(graceMs), ...command])},
      { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
    held.stdin.on('error', () => undefined);
    setInterval(() => undefined, 1000);`;
  return spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
}

async function held(parent: number, count: number): Promise<number[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const pids = descendants(parent).map((row) => row.pid);
    if (pids.length >= count || Date.now() > deadline) return pids;
    await sleep(50);
  }
}

async function goneWithin(pids: number[], ms: number): Promise<number> {
  const started = Date.now();
  while (pids.some(isAlive) && Date.now() - started < ms) await sleep(50);
  expect(pids.filter(isAlive)).toEqual([]);
  return Date.now() - started;
}

describe('a watchdog', () => {
  it('gives its child the stop signal when its parent is killed with SIGKILL', async () => {
    const parent = parentHolding('SIGTERM', 10_000, ['sleep', '1000']);
    const pids = await held(parent.pid!, 2);
    expect(pids).toHaveLength(2);
    parent.kill('SIGKILL');
    // Well within the grace: sleep ends on SIGTERM.
    expect(await goneWithin(pids, 5_000)).toBeLessThan(5_000);
  });

  it('kills a child that ignores the stop signal after the grace, with what it started', async () => {
    const parent = parentHolding('SIGTERM', 1_000, [
      'sh',
      '-c',
      'trap "" TERM; sleep 1000 & sleep 1000; wait',
    ]);
    const pids = await held(parent.pid!, 4);
    expect(pids).toHaveLength(4);
    parent.kill('SIGKILL');
    await sleep(500);
    expect(pids.filter(isAlive)).toHaveLength(4);
    await goneWithin(pids, 5_000);
  });
});

describe('a supervised process', () => {
  it('that refuses to start is reported once and not restarted', async () => {
    const reports: string[] = [];
    let refused = 0;
    const supervised = new Supervised({
      name: 'refuser',
      command: process.execPath,
      args: ['-e', `process.exit(${refusedExitCode})`],
      cwd: process.cwd(),
      env: process.env,
      report: (line) => reports.push(line),
      output: 'inherit',
      onRefused: () => refused++,
    });
    supervised.start();
    const deadline = Date.now() + 10_000;
    while (refused === 0 && Date.now() < deadline) await sleep(50);
    await sleep(1_500);
    expect(refused).toBe(1);
    expect(supervised.refused).toBe(true);
    expect(supervised.restarts).toBe(0);
    expect(reports).toEqual(['refuser refused to start (see above)']);
  });

  it("names its program's own pid, which a SIGHUP to its watchdog reaches", async () => {
    const lines: string[] = [];
    const supervised = new Supervised({
      name: 'reloader',
      command: process.execPath,
      args: [
        '-e',
        "process.on('SIGHUP', () => console.log('hung up ' + process.pid)); console.log('ready ' + process.pid); setInterval(() => undefined, 1000)",
      ],
      cwd: process.cwd(),
      env: process.env,
      report: () => undefined,
      output: (chunk) => lines.push(...chunk.toString().trim().split('\n')),
    });
    supervised.start();
    try {
      const deadline = Date.now() + 10_000;
      while (!lines.some((line) => line.startsWith('ready')) && Date.now() < deadline) await sleep(50);
      const program = supervised.programPid;
      expect(program).toBeDefined();
      expect(program).not.toBe(supervised.pid);
      expect(lines).toContain(`ready ${program}`);
      process.kill(supervised.pid!, 'SIGHUP');
      while (!lines.includes(`hung up ${program}`) && Date.now() < deadline) await sleep(50);
      expect(lines).toContain(`hung up ${program}`);
    } finally {
      await supervised.stop(5_000);
    }
  });

  it('that is killed leaves nothing of its group behind', async () => {
    const supervised = new Supervised({
      name: 'sleeper',
      command: 'sh',
      args: ['-c', 'sleep 1000 & sleep 1000; wait'],
      cwd: process.cwd(),
      env: process.env,
      report: () => undefined,
    });
    supervised.start();
    // The watchdog, sh and its two sleeps.
    const pids = [supervised.pid!, ...(await held(supervised.pid!, 3))];
    expect(pids).toHaveLength(4);
    await supervised.stop(5_000);
    await goneWithin(pids, 5_000);
  });
});
