/**
 * Finds the Temporal CLI (TEMPORAL_CLI_PATH, `temporal` on PATH, the user cache) or builds it
 * once with `go install …@v1.5.1` into the cache, showing progress while Go works.
 * (Later CLI versions carry a `replace` directive, which `go install` refuses.)
 */
import path from 'node:path';
import type { KeelConfig } from '../platform/config';
import { GoBuildUnavailable, goInstall, isExecutable, onPath, type Progress } from './go-install';

export type { Progress };

export const temporalCliVersion = '1.5.1';
const modulePath = `github.com/temporalio/cli/cmd/temporal@v${temporalCliVersion}`;

export class TemporalCliUnavailable extends Error {
  override readonly name = 'TemporalCliUnavailable';
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

/** Builds the CLI into the cache with `go install`. */
export async function buildTemporalCli(config: CliSettings, progress: Progress): Promise<string> {
  try {
    return await goInstall({
      config,
      module: modulePath,
      builtName: 'temporal',
      target: cachedCliPath(config.cacheDir),
      label: `the Temporal CLI v${temporalCliVersion}`,
      withoutGo:
        'Install the Temporal CLI (https://docs.temporal.io/cli) and put it on PATH or set TEMPORAL_CLI_PATH, install Go 1.23+ so Keel can build it, ' +
        'or set TEMPORAL_ADDRESS to a running Temporal server.',
      progress,
    });
  } catch (error) {
    if (error instanceof GoBuildUnavailable)
      throw new TemporalCliUnavailable(error.message, { cause: error });
    throw error;
  }
}

export async function ensureTemporalCli(config: CliSettings, progress: Progress): Promise<string> {
  return (await findTemporalCli(config)) ?? buildTemporalCli(config, progress);
}
