/**
 * Provisions the Temporal CLI (built once with go install when missing) and bundles the workflow
 * code once for the run. Each test file gets a dev server of its own from the test environment
 * (test/setup/temporal-environment.ts, decision 0010).
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../platform/config';
import { ensureTemporalCli } from '../../launch/temporal-cli';
import { buildWorkflowBundle } from '../../worker/bundle';
import { buildKeel } from './keel-build';

export default async function globalSetup(): Promise<void> {
  const config = parseConfig(process.env, process.cwd());
  const directory = await mkdtemp(path.join(os.tmpdir(), 'keel-test-'));
  const [cliPath, bundle, keelProgram] = await Promise.all([
    ensureTemporalCli(config, (line) => process.stderr.write(`[test setup] ${line}\n`)),
    buildWorkflowBundle(),
    buildKeel(directory),
  ]);
  const bundlePath = path.join(directory, 'workflow-bundle.js');
  await writeFile(bundlePath, bundle);
  // Test files run in worker processes forked after this, which inherit the environment.
  process.env.KEEL_TEST_BUNDLE = bundlePath;
  process.env.KEEL_TEST_DIR = directory;
  process.env.KEEL_TEST_CLI_PATH = cliPath;
  // What `keel worker` and `keel api` processes run (test/helpers/worker-process.ts, decision 0515);
  // set beforehand (`["--import","tsx","cli/keel.ts"]`), it is kept: the sources through tsx.
  process.env.KEEL_TEST_KEEL_PROGRAM ??= JSON.stringify(keelProgram);
}
