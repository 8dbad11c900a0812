/** `keel up` (or `keel up --cluster`) as a user runs it: a child process whose output is kept. */
import { type ChildProcess, spawn } from 'node:child_process';
import { connect } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

export interface KeelUp {
  process: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  /** Resolves once the process has exited and its output is all read. */
  closed: Promise<void>;
}

/**
 * The environment of `keel api` started by hand against the test's server: the machine's PATH and
 * HOME, the test Temporal server, one fixed encryption key, and `env`.
 */
export const keelApiEnv = (env: Record<string, string>): Record<string, string | undefined> => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  TEMPORAL_ADDRESS: process.env.KEEL_TEST_TEMPORAL_ADDRESS,
  KEEL_ENCRYPTION_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
  ...env,
});

export function keelUp(args: string[], env: Record<string, string>): KeelUp {
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/keel.ts', 'up', ...args], {
    cwd: path.resolve(__dirname, '../..'),
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  return { process: child, output: () => output, exited, closed };
}

/** Waits until the output (past `after` characters) shows `text`; fails at once if the process ended without it. */
export async function waitForOutput(up: KeelUp, text: string, timeoutMs: number, after = 0): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const shown = () => up.output().slice(after).includes(text);
  while (!shown()) {
    const ended = up.process.exitCode !== null || up.process.signalCode !== null;
    if (ended) await up.closed;
    if (shown()) return;
    if (ended || Date.now() > deadline)
      throw new Error(`no "${text}" within ${timeoutMs} ms; output so far:\n${up.output().slice(-4000)}`);
    await sleep(200);
  }
}

/** The banner's lines: from `heading` up to the first blank line after it. */
export function bannerOf(up: KeelUp, heading: string): string {
  const output = up.output();
  const start = output.lastIndexOf(heading);
  if (start < 0) throw new Error(`no "${heading}" in the output`);
  const end = output.indexOf('\n\n', start);
  return output.slice(start, end < 0 ? undefined : end);
}

/** Every port the banner names (`host:port` or `:port`), once each. */
export function portsNamedIn(banner: string): number[] {
  return [...new Set([...banner.matchAll(/:(\d{2,5})\b/g)].map((match) => Number(match[1])))];
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
