/**
 * LangGraph's Python SDK in a virtualenv of its own, made once in the user cache (like the
 * Temporal CLI) with pip from PyPI, then reused by every run.
 */
import { spawn, spawnSync } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** The `langgraph-sdk` release the smoke script runs against. */
export const pythonSdkVersion = '0.4.14';

/** True when `python3` (with venv) can run here; the Python contract test needs it. */
export const hasPython =
  spawnSync('python3', ['-c', 'import venv, ensurepip'], { stdio: 'ignore' }).status === 0;

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} failed (${code}): ${stderr}`)),
    );
  });
}

/** The virtualenv's python, creating the virtualenv first when it is not in the cache yet. */
export async function ensurePythonSdk(): Promise<string> {
  const cache = process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache');
  const target = path.join(cache, 'keel', 'python-sdk', pythonSdkVersion);
  const python = path.join(target, 'bin', 'python');
  try {
    await access(python, constants.X_OK);
    return python;
  } catch {
    // Not made yet.
  }
  await mkdir(path.dirname(target), { recursive: true });
  // Made aside and renamed, so two test processes cannot leave a half-installed one.
  const staging = await mkdtemp(path.join(path.dirname(target), '.build-'));
  try {
    await run('python3', ['-m', 'venv', staging]);
    await run(path.join(staging, 'bin', 'pip'), ['install', '--quiet', `langgraph-sdk==${pythonSdkVersion}`]);
    // Another process made it first: theirs is as good as ours.
    await rename(staging, target).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return python;
}
