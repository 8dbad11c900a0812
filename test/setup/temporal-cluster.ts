/**
 * A test file's Temporal on PostgreSQL, for a file whose requests cancel Temporal calls by the
 * hundred (decision 0470): the dev server works its store through one SQLite connection, which a
 * cancel landing at the wrong moment leaves `interrupted (9)` for good; PostgreSQL's driver
 * gives each call a connection of a pool, and a cancel costs that connection alone. It is the
 * cluster `keel up --cluster` runs (`launch/cluster/`), without its Web UI: PostgreSQL in the
 * file's directory and the four Temporal services. It starts in about 5 s.
 */
import { chmod } from 'node:fs/promises';
import path from 'node:path';
import pino from 'pino';
import { parseConfig } from '../../platform/config';
import { allPorts, clusterPorts, portsInUse } from '../../launch/cluster/ports';
import { TemporalCluster } from '../../launch/cluster/temporal-cluster';
import { freePort } from './free-port';

/** A frontend port whose services' ports (above it, and 300 below for membership) are all free. */
async function freeFrontendPort(postgres: number, ui: number): Promise<number> {
  for (;;) {
    // Membership ports, 300 below, must fit Temporal's smallint column.
    const frontend = 10_000 + Math.floor(Math.random() * 22_000);
    const ports = allPorts(clusterPorts(frontend, postgres, ui));
    if (new Set(ports).size === ports.length && (await portsInUse(ports)).length === 0) return frontend;
  }
}

export interface TestCluster {
  address: string;
  stop(): Promise<void>;
}

/** Starts the cluster with its data under `dataDir`; rejects (nothing left running) if it cannot. */
export async function startTestCluster(
  dataDir: string,
  report: (line: string) => void,
): Promise<TestCluster> {
  // PostgreSQL runs as its own account (as root cannot), which must traverse the test run's
  // directory (made 0700) to reach its data: traverse, not list. The launcher opens the two below.
  await chmod(path.dirname(dataDir), 0o711);
  const [postgres, ui] = [await freePort(), await freePort()];
  const frontend = await freeFrontendPort(postgres, ui);
  const config = parseConfig(
    {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      KEEL_DATA_DIR: dataDir,
      KEEL_TEMPORAL_PORT: String(frontend),
      KEEL_POSTGRES_PORT: String(postgres),
      KEEL_TEMPORAL_UI_PORT: String(ui),
    },
    dataDir,
  );
  let serving = false;
  const cluster = new TemporalCluster({
    config,
    ports: clusterPorts(frontend, postgres, ui),
    uiCodecEndpoint: 'http://127.0.0.1:1/codec',
    logger: pino({ level: 'silent' }),
    // Its progress before it serves is the start-up's; after, a process stopping is news.
    progress: (line) => {
      if (serving) report(line);
    },
    ui: false,
    // Visibility calls per second, as the dev server has them (its CLI raises Temporal's 10 to
    // 100): a thread search pages through up to 10 000 threads, beside the fuzzer's other
    // searches and counts, and at 10 a second one was throttled past its deadline (503).
    extraDynamicConfig: 'frontend.namespaceRPS.visibility:\n  - value: 100\n    constraints: {}\n',
  });
  try {
    await cluster.start();
    serving = true;
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return { address: cluster.frontend, stop: () => cluster.stop() };
}
