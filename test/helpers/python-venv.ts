/**
 * Python tools the tests and the benchmark run (LangGraph's Python SDK, schemathesis, LangGraph's
 * Agent Server), each in a virtualenv of its own made once in the user cache (like the Temporal
 * CLI) with pip from PyPI, then reused.
 */
import { spawn, spawnSync } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** True when `python3` (with venv) can run here; the Python tests need it. */
export const hasPython =
  spawnSync('python3', ['-c', 'import venv, ensurepip'], { stdio: 'ignore' }).status === 0;

function run(command: string, args: string[], onLine?: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      stdio: ['ignore', onLine === undefined ? 'ignore' : 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) if (line.trim() !== '') onLine?.(line.trim());
    });
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} failed (${code}): ${stderr}`)),
    );
  });
}

export interface VenvOptions {
  /** The cache folder's name, e.g. `python-sdk`. */
  name: string;
  /** The pinned package, `name==version`: also the cache folder's version. */
  requirement: string;
  /** A requirements file pinning every package, installed with `requirement`. */
  requirementsFile?: string;
  /** Called with each line pip prints while it installs (the build's progress); quiet without it. */
  onProgress?: (line: string) => void;
}

/** The virtualenv's `bin` folder, creating the virtualenv first when it is not in the cache yet. */
export async function ensureVenv({
  name,
  requirement,
  requirementsFile,
  onProgress,
}: VenvOptions): Promise<string> {
  const cache = process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache');
  const version = requirement.split('==')[1] ?? 'latest';
  const target = path.join(cache, 'keel', name, version);
  const bin = path.join(target, 'bin');
  try {
    await access(path.join(bin, 'python'), constants.X_OK);
    return bin;
  } catch {
    // Not made yet.
  }
  await mkdir(path.dirname(target), { recursive: true });
  // Made aside and renamed, so two test processes cannot leave a half-installed one.
  const staging = await mkdtemp(path.join(path.dirname(target), '.build-'));
  try {
    await run('python3', ['-m', 'venv', staging]);
    onProgress?.(`making a virtualenv for ${requirement} in ${target} (once)`);
    await run(
      path.join(staging, 'bin', 'pip'),
      [
        'install',
        onProgress === undefined ? '--quiet' : '--progress-bar=off',
        requirement,
        ...(requirementsFile === undefined ? [] : ['--requirement', requirementsFile]),
      ],
      onProgress,
    );
    // Another process made it first: theirs is as good as ours.
    await rename(staging, target).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return bin;
}
