/**
 * Issue 36, "one process tree, one owner": whatever ends `keel up` — Ctrl-C to the terminal's
 * process group while its output goes through `tee`, SIGTERM, SIGHUP, its output closing, SIGKILL
 * of `keel up` itself — every process it started is gone soon after. A taken port is refused
 * with one sentence and a non-zero exit, with nothing left running.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../helpers/api';
import { keelApiEnv, keelUp, type KeelUp, waitForOutput } from '../helpers/keel-up';
import { descendants, isAlive, programs, type ProcessRow } from '../helpers/process-tree';

jest.setTimeout(300_000);

const projectRoot = path.resolve(__dirname, '../..');
/**
 * From the signal to the last process gone: the API's grace, an idle worker's drain, the server's
 * stop. Below the watchdogs' own graces (15 s, the worker's 40 s): every process must have
 * stopped on its signal, not been killed for ignoring it.
 */
const goneWithinMs = 12_000;

async function environment(): Promise<Record<string, string>> {
  return {
    TEMPORAL_CLI_PATH: process.env.KEEL_TEST_CLI_PATH!,
    KEEL_TEMPORAL_PORT: String(await freePort()),
    KEEL_TEMPORAL_UI_PORT: String(await freePort()),
    KEEL_API_PORT: String(await freePort()),
    KEEL_WORKER_METRICS_PORT: String(await freePort()),
    KEEL_DATA_DIR: await mkdtemp(path.join(os.tmpdir(), 'keel-up-ends-')),
  };
}

/** `npm start | tee`, as a shell runs it: both in a new process group, as a terminal's foreground job is. */
function keelUpThroughTee(env: Record<string, string>): KeelUp {
  const child = spawn('sh', ['-c', 'node --import tsx cli/keel.ts up 2>&1 | tee /dev/null'], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return {
    process: child,
    output: () => output,
    exited: new Promise((resolve) => child.once('exit', (code) => resolve(code))),
    closed: new Promise((resolve) => child.once('close', () => resolve())),
  };
}

/** Every process under `root` once Keel is running: the Temporal server, the worker, the API, their watchdogs. */
function started(root: ChildProcess): ProcessRow[] {
  const rows = descendants(root.pid!);
  const names = programs(root.pid!).map((row) => row.args);
  expect(names.some((args) => args.includes('server start-dev'))).toBe(true);
  expect(names.some((args) => args.includes('keel.ts worker'))).toBe(true);
  expect(names.some((args) => args.includes('keel.ts api'))).toBe(true);
  return rows;
}

/** Milliseconds until none of `rows` is alive; fails with the survivors after `goneWithinMs`. */
async function goneIn(rows: ProcessRow[], since: number): Promise<number> {
  const deadline = since + goneWithinMs;
  while (rows.some((row) => isAlive(row.pid)) && Date.now() < deadline) await sleep(100);
  expect(rows.filter((row) => isAlive(row.pid))).toEqual([]);
  return Date.now() - since;
}

function report(what: string, rows: ProcessRow[], ms: number): void {
  process.stderr.write(`[keel up ends] ${what}: all ${rows.length} processes gone in ${ms} ms\n`);
}

async function refusesNothingAnswers(url: string): Promise<void> {
  await expect(fetch(url, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();
}

describe('whatever ends keel up, nothing it started outlives it', () => {
  it('Ctrl-C to the process group, with the output piped into tee (which dies too)', async () => {
    const env = await environment();
    const up = keelUpThroughTee(env);
    await waitForOutput(up, 'Keel is running.', 180_000);
    const rows = started(up.process);
    expect(rows.some((row) => row.args.startsWith('tee'))).toBe(true);
    const at = Date.now();
    // What a terminal does on Ctrl-C: SIGINT to every process of the foreground job.
    process.kill(-up.process.pid!, 'SIGINT');
    report('SIGINT to the group, through tee', rows, await goneIn(rows, at));
    await refusesNothingAnswers(`http://127.0.0.1:${env.KEEL_API_PORT}/healthz`);
  });

  it.each([['SIGTERM'], ['SIGHUP']] as const)('%s stops everything in order', async (signal) => {
    const up = keelUp([], await environment());
    await waitForOutput(up, 'Keel is running.', 180_000);
    const rows = started(up.process);
    const at = Date.now();
    up.process.kill(signal);
    expect(await up.exited).toBe(0);
    report(signal, rows, await goneIn(rows, at));
    expect(up.output()).toContain('Keel stopped.');
  });

  it('its output closing (tee ended): the next line it cannot write stops everything', async () => {
    const up = keelUp([], await environment());
    await waitForOutput(up, 'Keel is running.', 180_000);
    const rows = started(up.process);
    up.process.stdout!.destroy();
    // Something to say: a worker that dies is reported, and that line meets the closed pipe.
    const worker = programs(up.process.pid!).find((row) => row.args.includes('keel.ts worker'))!;
    const at = Date.now();
    process.kill(worker.pid, 'SIGKILL');
    expect(await up.exited).toBe(0);
    report('output closed', rows, await goneIn(rows, at));
  });

  it('SIGKILL of keel up itself: each watchdog stops what it holds', async () => {
    const env = await environment();
    const up = keelUp([], env);
    await waitForOutput(up, 'Keel is running.', 180_000);
    const rows = started(up.process);
    const at = Date.now();
    up.process.kill('SIGKILL');
    report('SIGKILL', rows, await goneIn(rows, at));
    await refusesNothingAnswers(`http://127.0.0.1:${env.KEEL_API_PORT}/healthz`);
  });
});

describe('a Keel process whose output reader has gone', () => {
  it('still stops on SIGTERM (the orphaned API used to hang in its exit and ignore every signal)', async () => {
    const port = await freePort();
    const api = spawn(process.execPath, ['--import', 'tsx', 'cli/keel.ts', 'api'], {
      cwd: projectRoot,
      env: keelApiEnv({
        KEEL_API_PORT: String(port),
        KEEL_LOG_FORMAT: 'json',
        KEEL_DATA_DIR: await mkdtemp(path.join(os.tmpdir(), 'keel-api-')),
      }),
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const exited = new Promise<number | null>((resolve) => api.once('exit', (code) => resolve(code)));
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const ready = await fetch(`http://127.0.0.1:${port}/healthz`).then(
        (response) => response.ok,
        () => false,
      );
      if (ready) break;
      await sleep(300);
    }
    // The reader goes (as `tee` or a killed `keel up` does); the next log line meets EPIPE.
    api.stdout.destroy();
    const at = Date.now();
    api.kill('SIGTERM');
    const code = await Promise.race([exited, sleep(10_000, 'still running')]);
    if (code === 'still running') api.kill('SIGKILL');
    expect(code).toBe(0);
    process.stderr.write(
      `[keel up ends] an API without its reader stopped on SIGTERM in ${Date.now() - at} ms\n`,
    );
  });
});

describe('a taken port is refused at start with one sentence', () => {
  const taken: Server[] = [];
  const take = async (): Promise<number> => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    taken.push(server);
    return (server.address() as { port: number }).port;
  };
  afterAll(() => taken.forEach((server) => server.close()));

  it.each([
    ['KEEL_TEMPORAL_PORT', "the Temporal server's gRPC port", 'set KEEL_TEMPORAL_PORT to another port'],
    ['KEEL_TEMPORAL_UI_PORT', "the Temporal Web UI's port", 'set KEEL_TEMPORAL_UI_PORT to another port'],
    ['KEEL_API_PORT', "the API's port", 'set KEEL_API_PORT to another port'],
    [
      'KEEL_WORKER_METRICS_PORT',
      "the worker's metrics port",
      'set KEEL_WORKER_METRICS_PORT to another port, or to off',
    ],
  ])('%s taken: exit 1, nothing started', async (variable, whose, remedy) => {
    const port = await take();
    const env = { ...(await environment()), [variable]: String(port) };
    const up = keelUp([], env);
    const seen: ProcessRow[] = [];
    while (up.process.exitCode === null) {
      seen.push(...descendants(up.process.pid!));
      await sleep(100);
    }
    expect(await up.exited).toBe(1);
    await up.closed;
    const lines = up.output().trim().split('\n');
    expect(lines).toEqual([
      expect.stringContaining(`keel up failed: ${whose} ${port} on 127.0.0.1 is in use: `),
    ]);
    expect(lines[0]).toContain(remedy);
    expect(seen.filter((row) => !row.args.includes('esbuild'))).toEqual([]);
    expect(seen.filter((row) => isAlive(row.pid))).toEqual([]);
  });
});
