/**
 * The Temporal cluster's programs, built once from their Go modules into Keel's cache beside the
 * CLI (`~/.cache/keel/temporal-server/<version>/`, `~/.cache/keel/temporal-ui/<version>/`):
 * the server (all four services), its SQL schema tool, and the Web UI server. The same versions
 * as the dev server (CLI v1.5.1 embeds server v1.29.1 and UI v2.42.1) and docker-compose.yml.
 */
import path from 'node:path';
import type { KeelConfig } from '../../platform/config';
import { goInstall, isExecutable, type Progress } from '../go-install';

export const temporalServerVersion = '1.29.1';
export const temporalUiVersion = '2.42.1';

type BuildSettings = Pick<KeelConfig, 'cacheDir' | 'childEnvironment' | 'toolchainEnvironment'>;

export interface ClusterBinaries {
  server: string;
  sqlTool: string;
  uiServer: string;
}

interface Program {
  key: keyof ClusterBinaries;
  module: string;
  builtName: string;
  directory: string[];
  file: string;
  label: string;
}

const programs: Program[] = [
  {
    key: 'server',
    module: `go.temporal.io/server/cmd/server@v${temporalServerVersion}`,
    builtName: 'server',
    directory: ['temporal-server', temporalServerVersion],
    file: 'temporal-server',
    label: `the Temporal server v${temporalServerVersion}`,
  },
  {
    key: 'sqlTool',
    module: `go.temporal.io/server/cmd/tools/sql@v${temporalServerVersion}`,
    builtName: 'sql',
    directory: ['temporal-server', temporalServerVersion],
    file: 'temporal-sql-tool',
    label: `Temporal's SQL schema tool v${temporalServerVersion}`,
  },
  {
    key: 'uiServer',
    module: `github.com/temporalio/ui-server/v2/cmd/server@v${temporalUiVersion}`,
    builtName: 'server',
    directory: ['temporal-ui', temporalUiVersion],
    file: 'temporal-ui-server',
    label: `the Temporal Web UI server v${temporalUiVersion}`,
  },
];

export function cachedBinaryPath(cacheDir: string, key: keyof ClusterBinaries): string {
  const program = programs.find((candidate) => candidate.key === key)!;
  return path.join(cacheDir, ...program.directory, program.file);
}

/** Finds each program in the cache, building the missing ones one after another (Go is heavy). */
export async function ensureClusterBinaries(
  config: BuildSettings,
  progress: Progress,
): Promise<ClusterBinaries> {
  const found: Partial<ClusterBinaries> = {};
  for (const program of programs) {
    const target = cachedBinaryPath(config.cacheDir, program.key);
    found[program.key] = (await isExecutable(target))
      ? target
      : await goInstall({
          config,
          module: program.module,
          builtName: program.builtName,
          target,
          label: program.label,
          withoutGo:
            'Install Go 1.25+ so Keel can build it, or run your own Temporal cluster and point Keel at it with TEMPORAL_ADDRESS.',
          progress,
        });
  }
  return found as ClusterBinaries;
}
