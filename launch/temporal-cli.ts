/**
 * Finds the Temporal CLI (TEMPORAL_CLI_PATH, `temporal` on PATH, the user cache) or builds it
 * once with `go install …@v1.5.1` into the cache, showing progress while Go works.
 * (Later CLI versions carry a `replace` directive, which `go install` refuses.)
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { KeelConfig } from '../common/config';

export const temporalCliVersion = '1.5.1';
const modulePath = `github.com/temporalio/cli/cmd/temporal@v${temporalCliVersion}`;

export class TemporalCliUnavailable extends Error {
  override readonly name = 'TemporalCliUnavailable';
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function onPath(name: string, searchPath: string | undefined): Promise<string | undefined> {
  for (const directory of (searchPath ?? '').split(path.delimiter)) {
    if (directory === '') continue;
    const candidate = path.join(directory, name);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export function cachedCliPath(cacheDir: string): string {
  return path.join(cacheDir, 'temporal-cli', temporalCliVersion, 'temporal');
}

type CliSettings = Pick<KeelConfig, 'cacheDir' | 'childEnvironment' | 'toolchainEnvironment'> & {
  temporal: Pick<KeelConfig['temporal'], 'cliPath'>;
};

/** The CLI if one is already there, in the documented lookup order. */
export async function findTemporalCli(config: CliSettings): Promise<string | undefined> {
  const explicit = config.temporal.cliPath;
  if (explicit !== undefined) {
    if (await isExecutable(explicit)) return explicit;
    throw new TemporalCliUnavailable(`TEMPORAL_CLI_PATH=${explicit} is not an executable file`);
  }
  const found = await onPath('temporal', config.childEnvironment.PATH);
  if (found !== undefined) return found;
  const cached = cachedCliPath(config.cacheDir);
  return (await isExecutable(cached)) ? cached : undefined;
}

/** Reports what a long build is doing: called with a line now and then. */
export type Progress = (line: string) => void;

/**
 * Builds the CLI into the cache with `go install`. It builds into a temporary directory and
 * renames, so two processes building at once cannot leave a half-written binary.
 */
export async function buildTemporalCli(config: CliSettings, progress: Progress): Promise<string> {
  const go = await onPath('go', config.childEnvironment.PATH);
  if (go === undefined) {
    throw new TemporalCliUnavailable(
      'no Temporal CLI was found and Go is not installed to build one. Install the Temporal CLI ' +
        '(https://docs.temporal.io/cli) and put it on PATH or set TEMPORAL_CLI_PATH, install Go 1.23+ so Keel can build it, ' +
        'or set TEMPORAL_ADDRESS to a running Temporal server.',
    );
  }
  const target = cachedCliPath(config.cacheDir);
  await mkdir(path.dirname(target), { recursive: true });
  const staging = await mkdtemp(path.join(path.dirname(target), '.build-'));
  progress(
    `Building the Temporal CLI v${temporalCliVersion} with go install (first run only; a few minutes)…`,
  );
  const started = Date.now();
  let downloaded = 0;
  let lastLine = '';
  const ticker = setInterval(() => {
    const elapsed = Math.round((Date.now() - started) / 1000);
    progress(
      `  … ${elapsed} s, ${downloaded} Go modules fetched${lastLine === '' ? '' : `, last: ${lastLine}`}`,
    );
  }, 10_000);
  try {
    const output: string[] = [];
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(go, ['install', modulePath], {
        env: { ...config.toolchainEnvironment, GOBIN: staging },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const onData = (chunk: Buffer): void => {
        for (const line of chunk.toString('utf8').split('\n')) {
          if (line.trim() === '') continue;
          output.push(line);
          if (line.startsWith('go: downloading')) {
            downloaded++;
            lastLine = line.slice('go: downloading '.length);
          }
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.on('error', reject);
      child.on('close', resolve);
    });
    if (code !== 0) {
      throw new TemporalCliUnavailable(
        `go install ${modulePath} failed (exit ${code}):\n${output.slice(-20).join('\n')}`,
      );
    }
    await rename(path.join(staging, 'temporal'), target);
    progress(`Built the Temporal CLI in ${Math.round((Date.now() - started) / 1000)} s: ${target}`);
    return target;
  } finally {
    clearInterval(ticker);
    await rm(staging, { recursive: true, force: true });
  }
}

export async function ensureTemporalCli(config: CliSettings, progress: Progress): Promise<string> {
  return (await findTemporalCli(config)) ?? buildTemporalCli(config, progress);
}
