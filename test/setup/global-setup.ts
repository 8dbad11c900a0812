/**
 * Starts the run's Temporal dev servers, one per jest worker, from the Temporal CLI Keel provisions
 * (built once with go install when missing). One server per worker halves what each one's single
 * SQLite connection serves over a run of half an hour (CI once saw a lone shared server stall for
 * good late in a run: "shard status unknown"); test/setup/temporal-per-worker.ts points each jest
 * worker at its own. Their low continue-as-new threshold makes every workflow test cross
 * continue-as-new boundaries for real.
 */
import type { Config } from '@jest/types';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { parseConfig } from '../../common/config';
import { allSearchAttributes } from '../../common/search-attributes';
import { dynamicConfigArgs } from '../../launch/dev-server';
import { ensureTemporalCli } from '../../launch/temporal-cli';
import { buildWorkflowBundle } from '../../worker/bundle';

/** History events after which the server suggests continue-as-new (production default: 4096). */
export const testContinueAsNewEvents = 150;

declare global {
  var keelTestEnvironments: TestWorkflowEnvironment[] | undefined;
}

export default async function globalSetup(globalConfig: Config.GlobalConfig): Promise<void> {
  const config = parseConfig(process.env, process.cwd());
  const cliPath = await ensureTemporalCli(config, (line) => process.stderr.write(`[test setup] ${line}\n`));
  const directory = await mkdtemp(path.join(os.tmpdir(), 'keel-test-'));
  const servers = Math.min(4, Math.max(1, globalConfig.maxWorkers));
  const startServer = () =>
    TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: cliPath },
        ip: '127.0.0.1',
        searchAttributes: allSearchAttributes,
        extraArgs: [
          // The tests run on the server settings Keel runs on (decision 0260).
          ...dynamicConfigArgs(),
          '--dynamic-config-value',
          `limit.historyCount.suggestContinueAsNew=${testContinueAsNewEvents}`,
          '--log-level',
          'error',
        ],
      },
    });
  const [environments, bundle] = await Promise.all([
    Promise.all(Array.from({ length: servers }, startServer)),
    buildWorkflowBundle(),
  ]);
  const bundlePath = path.join(directory, 'workflow-bundle.js');
  await writeFile(bundlePath, bundle);
  globalThis.keelTestEnvironments = environments;
  // Test files run in worker processes forked after this, which inherit the environment.
  process.env.KEEL_TEST_TEMPORAL_ADDRESSES = environments.map((environment) => environment.address).join(',');
  process.env.KEEL_TEST_TEMPORAL_ADDRESS = environments[0]!.address;
  process.env.KEEL_TEST_BUNDLE = bundlePath;
  process.env.KEEL_TEST_DIR = directory;
  process.env.KEEL_TEST_CLI_PATH = cliPath;
}
