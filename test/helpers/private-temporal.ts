/**
 * A Temporal dev server of one test file's own, for a file whose load would weigh on the run's
 * shared server: schemathesis's thousands of requests make hundreds of threads, runs, searches
 * and deletes, and the shared server's one SQLite connection serves every other file meanwhile
 * (CI once saw it stall for good, "shard status unknown", late in a run). Call it at the top of
 * the file, before any harness: the harnesses read the address when they start.
 */
import { mkdtemp } from 'node:fs/promises';
import path from 'node:path';
import { startDevServer, type DevServer } from '../../launch/dev-server';
import { freePort } from './api';
import { closeTestClient } from './temporal';

export function privateTemporal(): void {
  let server: DevServer | undefined;
  const shared = process.env.KEEL_TEST_TEMPORAL_ADDRESS;
  beforeAll(async () => {
    const cliPath = process.env.KEEL_TEST_CLI_PATH;
    if (cliPath === undefined)
      throw new Error('no Temporal CLI: run the tests through jest (its global setup has one)');
    const dataDir = await mkdtemp(path.join(process.env.KEEL_TEST_DIR ?? '/tmp', 'private-temporal-'));
    server = await startDevServer({
      cliPath,
      dataDir,
      port: await freePort(),
      uiPort: await freePort(),
      namespace: 'default',
      onOutput: (line) => process.stderr.write(`[private temporal] ${line}\n`),
    });
    process.env.KEEL_TEST_TEMPORAL_ADDRESS = server.address;
  }, 120_000);
  afterAll(async () => {
    await closeTestClient();
    await server?.stop();
    // Assigning undefined would store the string "undefined".
    if (shared === undefined) delete process.env.KEEL_TEST_TEMPORAL_ADDRESS;
    else process.env.KEEL_TEST_TEMPORAL_ADDRESS = shared;
  }, 60_000);
}
