/**
 * `npm run chaos`: a soak. Starts its own Temporal dev server and fake Anthropic, and runs many
 * conversations through the real API on real `keel worker` processes while one of them is
 * SIGKILLed at random every few seconds (or, with SOAK_DISRUPTION=rolling, while the workers are
 * restarted one after another), then prints a summary with the reason for every refusal. Exit
 * code 1 when anything was refused, lost, duplicated or orphaned. Tunables: SOAK_SECONDS (default
 * 120), SOAK_CONVERSATIONS (8), SOAK_WORKERS (2), SOAK_DISRUPTION (kill | rolling).
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startDevServer } from '../../launch/dev-server';
import { ensureTemporalCli } from '../../launch/temporal-cli';
import { parseConfig } from '../../platform/config';
import { buildWorkflowBundle } from '../../worker/bundle';
import { testDataConverter } from '../helpers/encryption';
import { runSoak, soakClean, type Disruption } from './soak-run';
import { guardedInterceptors } from '../../api/gateway/grpc-closed-guard';

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'keel-soak-server-'));
  const config = parseConfig(
    { PATH: process.env.PATH, HOME: process.env.HOME, KEEL_DATA_DIR: dataDir },
    process.cwd(),
  );
  const cliPath = await ensureTemporalCli(config, (line) => process.stderr.write(`${line}\n`));
  const port = 19_233 + Math.floor(Math.random() * 1000);
  const [server, bundle] = await Promise.all([
    startDevServer({ cliPath, dataDir, port, uiPort: port + 1000, namespace: 'default' }),
    buildWorkflowBundle(),
  ]);
  const bundlePath = path.join(dataDir, 'bundle.js');
  await writeFile(bundlePath, bundle);
  process.env.KEEL_TEST_TEMPORAL_ADDRESS = server.address;
  process.env.KEEL_TEST_BUNDLE = bundlePath;
  const client = new Client({
    connection: await Connection.connect({ address: server.address, interceptors: guardedInterceptors() }),
    dataConverter: testDataConverter(),
  });
  const summary = await runSoak({
    client,
    seconds: Number(process.env.SOAK_SECONDS ?? 120),
    conversations: Number(process.env.SOAK_CONVERSATIONS ?? 8),
    workers: Number(process.env.SOAK_WORKERS ?? 2),
    disruption: (process.env.SOAK_DISRUPTION ?? 'kill') as Disruption,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  await client.connection.close();
  await server.stop();
  process.exit(soakClean(summary) ? 0 : 1);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
