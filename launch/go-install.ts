/**
 * Builds a Go command once into Keel's cache, showing progress while Go works: with `go install
 * module@version`, or with `go build` inside a module of Keel's that pins some of its dependencies
 * (the Temporal CLI, decision 0495). It builds into a temporary directory and renames, so two
 * processes building at once cannot leave a half-written binary. The Temporal CLI, server, SQL tool
 * and UI server are built this way.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { access, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import type { KeelConfig } from '../platform/config';
import { KeelError } from '../common/errors';

/** Reports what a long build is doing: called with a line now and then. */
export type Progress = (line: string) => void;

export class GoBuildUnavailable extends KeelError {
  override readonly name = 'GoBuildUnavailable';
}

export async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export async function onPath(name: string, searchPath: string | undefined): Promise<string | undefined> {
  for (const directory of (searchPath ?? '').split(path.delimiter)) {
    if (directory === '') continue;
    const candidate = path.join(directory, name);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export interface GoInstallOptions {
  config: Pick<KeelConfig, 'childEnvironment' | 'toolchainEnvironment'>;
  /** `module/path/cmd/x@vX.Y.Z`; without the version when built `inModule`. */
  module: string;
  /**
   * Build with `go build` in this directory, whose go.mod and go.sum choose every dependency's
   * version, instead of `go install module@version` (which honours no pin of Keel's).
   */
  inModule?: { directory: string; ldflags?: string };
  /** The file `go install` writes (the package's last path element). */
  builtName: string;
  /** Where the binary ends up. */
  target: string;
  /** What is being built, for the progress lines ("the Temporal CLI v1.5.1"). */
  label: string;
  /** What to do instead when Go is missing. */
  withoutGo: string;
  progress: Progress;
}

export async function goInstall(options: GoInstallOptions): Promise<string> {
  const { config, module, target, label, progress } = options;
  const go = await onPath('go', config.childEnvironment.PATH);
  if (go === undefined)
    throw new GoBuildUnavailable(
      `${label} was not found and Go is not installed to build it. ${options.withoutGo}`,
    );
  await mkdir(path.dirname(target), { recursive: true });
  const staging = await mkdtemp(path.join(path.dirname(target), '.build-'));
  progress(
    `Building ${label} with go ${options.inModule === undefined ? 'install' : 'build'} (first run only; a few minutes)…`,
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
      const inModule = options.inModule;
      const args =
        inModule === undefined
          ? ['install', module]
          : [
              'build',
              '-o',
              path.join(staging, options.builtName),
              ...(inModule.ldflags === undefined ? [] : ['-ldflags', inModule.ldflags]),
              module,
            ];
      const child = spawn(go, args, {
        cwd: inModule?.directory,
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
      throw new GoBuildUnavailable(
        `go ${options.inModule === undefined ? 'install' : 'build'} ${module} failed (exit ${code}):\n${output.slice(-20).join('\n')}`,
      );
    }
    await rename(path.join(staging, options.builtName), target);
    progress(`Built ${label} in ${Math.round((Date.now() - started) / 1000)} s: ${target}`);
    return target;
  } finally {
    clearInterval(ticker);
    await rm(staging, { recursive: true, force: true });
  }
}
