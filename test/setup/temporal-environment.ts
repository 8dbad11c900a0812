/**
 * Each test file's own Temporal dev server: started before the file loads, killed after its last
 * hook. Long-lived shared servers stalled for good late in full runs ("shard status unknown",
 * then every query "interrupted (9)": the dev server's one SQLite connection, interrupted by a
 * cancelled request, can stay interrupted), failing every file after. A server lives as long as
 * one file now, and starting one takes a fraction of a second (decision 0010).
 *
 * In memory, on the settings Keel runs on (decision 0260), with a low continue-as-new threshold
 * so every workflow test crosses continue-as-new boundaries for real.
 *
 * A file whose requests cancel Temporal calls by the hundred asks in its docblock for Temporal on
 * PostgreSQL instead (`@jest-environment-options {"temporal": "cluster"}`, decision 0470): the
 * dev server's one SQLite connection does not survive that. It takes about 5 s to start, and keeps
 * Temporal's own continue-as-new threshold.
 */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';
import { TestEnvironment } from 'jest-environment-node';
import { startDevServer, type DevServer } from '../../launch/dev-server';
import { startTestCluster, type TestCluster } from './temporal-cluster';
import { freePort } from './free-port';

/** History events after which the server suggests continue-as-new (production default: 4096). */
export const testContinueAsNewEvents = 150;

export default class TemporalTestEnvironment extends TestEnvironment {
  private server: DevServer | undefined;
  private cluster: TestCluster | undefined;
  private readonly kind: 'dev-server' | 'cluster';

  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    super(config, context);
    const asked = config.projectConfig.testEnvironmentOptions['temporal'] ?? 'dev-server';
    if (asked !== 'dev-server' && asked !== 'cluster')
      throw new Error(
        `${context.testPath}: "temporal" is "dev-server" or "cluster", not ${JSON.stringify(asked)}`,
      );
    this.kind = asked;
  }

  override async setup(): Promise<void> {
    await super.setup();
    const cliPath = process.env.KEEL_TEST_CLI_PATH;
    if (cliPath === undefined)
      throw new Error('no Temporal CLI: run the tests through jest (its global setup has one)');
    const dataDir = await mkdtemp(path.join(process.env.KEEL_TEST_DIR ?? os.tmpdir(), 'temporal-'));
    if (this.kind === 'cluster') {
      this.cluster = await startTestCluster(dataDir, (line) => process.stderr.write(`[temporal] ${line}\n`));
      this.serve(this.cluster.address);
      return;
    }
    let logged = 0;
    // Its ports are free when picked, not reserved: a server started at the same moment (the
    // other jest worker's, or its own internal ones) can take one first. Three tries, new ports each.
    const start = async (): Promise<DevServer> =>
      startDevServer({
        cliPath,
        dataDir,
        inMemory: true,
        port: await freePort(),
        uiPort: await freePort(),
        namespace: 'default',
        extraArgs: [
          '--headless',
          '--dynamic-config-value',
          `limit.historyCount.suggestContinueAsNew=${testContinueAsNewEvents}`,
        ],
        // Its log (errors only), not its start-up banner; the first lines of a file are enough to
        // tell what went wrong.
        onOutput: (line) => {
          if (!line.includes('level=')) return;
          logged += 1;
          if (logged <= 20) process.stderr.write(`[temporal] ${line}\n`);
          else if (logged === 21) process.stderr.write('[temporal] … (more lines left out)\n');
        },
      });
    for (let attempt = 1; ; attempt += 1) {
      try {
        this.server = await start();
        break;
      } catch (error) {
        if (attempt === 3) throw error;
        process.stderr.write(
          `[temporal] start ${attempt} failed, trying again: ${error instanceof Error ? error.message : String(error)}\n`,
        );
      }
    }
    this.serve(this.server.address);
  }

  /** Where the file finds its Temporal. */
  private serve(address: string): void {
    // The file's own environment, and the worker process's for what it spawns without one (a
    // jest worker runs one file at a time).
    this.global.process.env.KEEL_TEST_TEMPORAL_ADDRESS = address;
    process.env.KEEL_TEST_TEMPORAL_ADDRESS = address;
  }

  override async teardown(): Promise<void> {
    // Its data goes with it: no graceful stop to wait for.
    this.server?.kill();
    this.server = undefined;
    // PostgreSQL is stopped, not killed: a killed postmaster can leave its backends behind.
    await this.cluster?.stop();
    this.cluster = undefined;
    await super.teardown();
  }
}
