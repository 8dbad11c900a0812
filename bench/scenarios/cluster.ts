/**
 * 11. Cluster: the throughput workload (conversations × tool turns through the API) on the dev
 * server with one worker, then on the cluster `keel up --cluster` runs — PostgreSQL and the four
 * Temporal services from `launch/cluster/` — with 1, 2 and 3 Keel worker hosts. CPU per process
 * (PostgreSQL with its backends) says what saturates.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { parseConfig } from '../../platform/config';
import { allPorts, clusterPorts, portsInUse, type TemporalService } from '../../launch/cluster/ports';
import { TemporalCluster } from '../../launch/cluster/temporal-cluster';
import { freePort, type KeelProcess, spawnNode, type System } from '../harness';
import { progress } from '../progress';
import type { Row, ScenarioResult } from '../report';
import { Sampler, type Usage } from '../sampler';
import { showSpread, spread } from '../stats';
import { busiest, toolTurns, type Trial } from './throughput';

export interface ClusterBenchOptions {
  conversations: number;
  turns: number;
  workerHosts: number[];
  trials: number;
}

async function measure(
  apiUrl: string,
  pids: Record<string, number>,
  options: ClusterBenchOptions,
): Promise<Trial[]> {
  // One conversation's turns first, so no first-call cost (a cold worker cache, a new shard) is measured.
  await toolTurns(apiUrl, 1, 2);
  const trials: Trial[] = [];
  for (let index = 0; index < options.trials; index++) {
    const sampler = new Sampler(pids, { trees: ['postgresql'] });
    await sampler.start();
    const load = await toolTurns(apiUrl, options.conversations, options.turns);
    trials.push({ ...load, usage: await sampler.stop() });
  }
  return trials;
}

/** CPU of every measured process but the benchmark's own client, in % of one core. */
const ours = (usage: Usage): number =>
  Object.entries(usage.processes)
    .filter(([name]) => name !== 'bench')
    .reduce((sum, [, process]) => sum + process.cpu_percent, 0);

function rowsOf(label: string, trials: Trial[], first: boolean): Row[] {
  const last = trials.at(-1)!;
  const failed = trials.reduce((sum, trial) => sum + trial.failed, 0);
  return [
    {
      scenario: first ? '11 cluster' : '',
      metric: `${label}: turns/s`,
      value: showSpread(spread(trials.map((trial) => trial.turns_per_s))),
      note:
        failed > 0
          ? `${failed} turns failed: ${Object.entries(
              trials.reduce<Record<string, number>>((all, trial) => {
                for (const [why, count] of Object.entries(trial.failures ?? {}))
                  all[why] = (all[why] ?? 0) + count;
                return all;
              }, {}),
            )
              .map(([why, count]) => `${count}× ${why}`)
              .join(', ')}`
          : '',
    },
    {
      scenario: '',
      metric: '  p50 / p95 turn latency, ms',
      value: `${showSpread(spread(trials.map((trial) => trial.p50_ms)), 0)} / ${showSpread(spread(trials.map((trial) => trial.p95_ms)), 0)}`,
    },
    {
      scenario: '',
      metric: '  CPU (last trial)',
      value: `${last.usage.machine_busy_percent.toFixed(0)}% of machine`,
      // What Keel and Temporal used against what the machine had: the rest was other load.
      note: `ours ${ours(last.usage).toFixed(0)}% of ${os.cpus().length * 100}%; ${busiest(last.usage)}`,
    },
  ];
}

/** A frontend port whose neighbours (the other services, membership 300 below) are all free. */
async function freeClusterPorts() {
  for (;;) {
    const frontend = 10_000 + Math.floor(Math.random() * 22_000);
    const ports = clusterPorts(frontend, await freePort(), await freePort());
    if ((await portsInUse(allPorts(ports))).length === 0) return ports;
  }
}

export async function clusterThroughput(
  system: System,
  options: ClusterBenchOptions,
): Promise<ScenarioResult> {
  const label = `${options.conversations} conversations × ${options.turns} tool turns`;
  const rows: Row[] = [];
  const data: Record<string, unknown> = { conversations: options.conversations, turns: options.turns };

  progress.note('dev server, 1 worker');
  const devServer = await measure(
    system.apiUrl,
    {
      'dev server': system.server.process.pid!,
      'keel worker': system.worker.pid,
      api: system.api.pid,
      bench: process.pid,
    },
    options,
  );
  rows.push(...rowsOf(`dev server, 1 worker, ${label}`, devServer, true));
  data['dev server'] = devServer;

  const dir = await mkdtemp(path.join(os.tmpdir(), 'keel-bench-cluster-'));
  const ports = await freeClusterPorts();
  const config = parseConfig(
    {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      KEEL_DATA_DIR: dir,
      KEEL_TEMPORAL_PORT: String(ports.grpc.frontend),
      KEEL_POSTGRES_PORT: String(ports.postgres),
      KEEL_TEMPORAL_UI_PORT: String(ports.ui),
    },
    process.cwd(),
  );
  const cluster = new TemporalCluster({
    config,
    ports,
    uiCodecEndpoint: `${system.apiUrl}/codec`,
    logger: pino({ level: 'silent' }),
    progress: (line) => progress.note(line),
  });
  const hosts: KeelProcess[] = [];
  let api: KeelProcess | undefined;
  try {
    progress.note('starting PostgreSQL and the four Temporal services');
    await cluster.start();
    const apiPort = await freePort();
    const env = {
      ...system.env,
      TEMPORAL_ADDRESS: cluster.frontend,
      KEEL_API_PORT: String(apiPort),
      KEEL_WORKSPACES_DIR: path.join(dir, 'workspaces'),
      KEEL_LOG_LEVEL: 'info',
    };
    api = await spawnNode('api', 'cli/keel.ts', ['api'], env, /api ready/);
    const services: Record<string, number> = { postgresql: cluster.process('postgresql').pid! };
    for (const service of ['history', 'matching', 'frontend', 'worker'] satisfies TemporalService[])
      services[service] = cluster.process(service).pid!;
    for (const count of [...options.workerHosts].sort((a, b) => a - b)) {
      while (hosts.length < count) {
        const name = `keel worker-${hosts.length + 1}`;
        const dataDir = path.join(dir, 'hosts', name.replace('keel ', ''));
        await mkdir(dataDir, { recursive: true });
        hosts.push(
          await spawnNode(
            name,
            'cli/keel.ts',
            ['worker'],
            { ...env, KEEL_DATA_DIR: dataDir },
            /worker ready/,
          ),
        );
      }
      progress.note(`cluster, ${count} worker host${count === 1 ? '' : 's'}`);
      const trials = await measure(
        `http://127.0.0.1:${apiPort}`,
        {
          ...services,
          ...Object.fromEntries(hosts.map((host) => [host.name, host.pid])),
          api: api.pid,
          bench: process.pid,
        },
        options,
      );
      rows.push(...rowsOf(`cluster, ${count} worker host${count === 1 ? '' : 's'}, ${label}`, trials, false));
      data[`cluster ${count}`] = trials;
    }
  } finally {
    await api?.stop();
    await Promise.all(hosts.map((host) => host.stop()));
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  }
  return { rows, data };
}
