/**
 * Finds the Temporal CLI (TEMPORAL_CLI_PATH, `temporal` on PATH, the user cache) or builds it
 * once into the cache, showing progress while Go works: v1.5.1 (later CLI versions carry a
 * `replace` directive, which `go install` refuses), built with `go build` in
 * `launch/temporal-cli-build/`, whose go.mod raises its SQLite driver to one that survives
 * cancelled calls (decision 0495).
 */
import path from 'node:path';
import type { KeelConfig } from '../platform/config';
import { packageRoot } from '../platform/package-root';
import { GoBuildUnavailable, goInstall, isExecutable, onPath, type Progress } from './go-install';
import { KeelError } from '../common/errors';

export type { Progress };

export const temporalCliVersion = '1.5.1';
/** The SQLite driver the CLI is built with (launch/temporal-cli-build/go.mod); 1.5.1 has 1.34.1. */
export const sqliteDriverVersion = '1.62.0';
const packagePath = 'github.com/temporalio/cli/cmd/temporal';
const buildModule = path.join(packageRoot, 'launch', 'temporal-cli-build');

export class TemporalCliUnavailable extends KeelError {
  override readonly name = 'TemporalCliUnavailable';
}

export function cachedCliPath(cacheDir: string): string {
  // Keyed by both versions: a CLI cached before the driver was raised is never taken for this one.
  return path.join(
    cacheDir,
    'temporal-cli',
    `${temporalCliVersion}+sqlite-${sqliteDriverVersion}`,
    'temporal',
  );
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

/** Builds the CLI into the cache with `go build` in Keel's pinning module. */
export async function buildTemporalCli(config: CliSettings, progress: Progress): Promise<string> {
  try {
    return await goInstall({
      config,
      module: packagePath,
      inModule: {
        directory: buildModule,
        // What `temporal --version` says (the CLI reads it from here; a `go build` leaves 0.0.0-DEV).
        ldflags: `-X github.com/temporalio/cli/temporalcli.Version=${temporalCliVersion}`,
      },
      builtName: 'temporal',
      target: cachedCliPath(config.cacheDir),
      label: `the Temporal CLI v${temporalCliVersion} (SQLite driver ${sqliteDriverVersion})`,
      withoutGo:
        'Install the Temporal CLI (https://docs.temporal.io/cli) and put it on PATH or set TEMPORAL_CLI_PATH, install Go 1.26+ so Keel can build it, ' +
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
