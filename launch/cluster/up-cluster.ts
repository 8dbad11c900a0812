/**
 * `keel up --cluster` (`npm run cluster`): the production topology on this machine. A private
 * PostgreSQL, the four Temporal services, the Web UI, several Keel worker hosts (each with its
 * own data dir, as separate machines have, and one workspaces directory they all share, as a
 * shared volume is: decision 0170) and the API; prints where everything is. SIGUSR2 rolls
 * the worker hosts one at a time, as a deploy does. Ctrl-C, SIGTERM, SIGHUP (its terminal gone) or
 * a closed output stops everything in order: API, worker hosts (draining), UI, Temporal services,
 * PostgreSQL. The next start finds every conversation.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import type { KeelConfig } from '../../platform/config';
import { guardedInterceptors } from '../../api/gateway/grpc-closed-guard';
import { loadEncryptionKeys } from '../../codec/keys';
import { childProcessEnvironment, createLogger } from '../env';
import { modelBanner } from '../model-banner';
import { keelCommandArgs, packageRoot } from '../../platform/package-root';
import { Supervised, whenShutDown } from '../supervisor';
import { requireFreePorts } from '../free-ports';
import {
  apiPortUse,
  metricsPortUses,
  metricsUrl,
  relay,
  say,
  shown,
  stopSignals,
  stopWhenOutputIsGone,
  waitForPage,
  waitForReady,
} from '../up';
import { allPorts, clusterPorts, portsInUse, portsProblem } from './ports';
import { bundleWorkflows, rollWorkerHosts, waitUntilPolling, type WorkerHost } from './rolling-deploy';
import { ClusterStopped, TemporalCluster } from './temporal-cluster';

const sameSignalMs = 1_000;
/**
 * What asks for a rolling deploy (decision 0331). Not SIGHUP: that is a closed terminal, which
 * stops `keel up` like Ctrl-C (decision 0330). SIGUSR1 is Node's debugger.
 */
export const deploySignal: NodeJS.Signals = 'SIGUSR2';

export async function upCluster(config: KeelConfig): Promise<number> {
  if (config.temporal.address !== undefined) {
    say(
      'keel up --cluster starts its own Temporal cluster: unset TEMPORAL_ADDRESS (or run `keel worker` and `keel api` against yours).',
    );
    return 2;
  }
  await mkdir(config.dataDir, { recursive: true });
  await mkdir(config.workspacesDir, { recursive: true });
  // Generated once into the data dir; every worker host and the API get the same keys.
  const keys = await loadEncryptionKeys(config.encryption);
  const encryptionKeys = keys.map((key) => `${key.id}:${key.key.toString('base64')}`).join(',');
  const apiUrl = `http://${config.api.host}:${config.api.port}`;
  const ports = clusterPorts(
    config.temporal.devServerPort,
    config.cluster.postgresPort,
    config.temporal.devServerUiPort,
  );
  const logger = createLogger(config, 'cluster');
  const cluster = new TemporalCluster({
    config,
    ports,
    uiCodecEndpoint: `${apiUrl}/codec`,
    logger,
    progress: say,
  });
  const hosts: WorkerHost[] = [];
  let api: Supervised | undefined;
  const shutdown: { done?: Promise<number>; at: number } = { at: 0 };
  const shuttingDown = (): Promise<number> | undefined => shutdown.done;
  let rolling: Promise<void> | undefined;
  let deploys = 0;
  /** 1 once a process refused to start. */
  let exitCode = 0;
  // On by default, as under `keel up` (issue 36): host n serves on 9464 (or KEEL_WORKER_METRICS_PORT)
  // + n − 1, so hosts on one machine never share a port; `KEEL_WORKER_METRICS_PORT=off` turns it off.
  const base = config.telemetry.launchedWorkerMetrics;
  const hostMetrics =
    base === undefined
      ? []
      : Array.from({ length: config.cluster.workerHosts }, (_, index) => ({
          ...base,
          port: base.port + index,
        }));

  const stopAll = async (): Promise<number> => {
    say('Stopping Keel: API, worker hosts (draining in-flight work), Web UI, Temporal services, PostgreSQL…');
    await api?.stop(15_000);
    await Promise.all(hosts.map((host) => host.process.stop((config.shutdownGraceS + 10) * 1000)));
    await cluster.stop();
    say(`Keel stopped. Threads are kept in ${shown(config.dataDir)}`);
    return exitCode;
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    const now = Date.now();
    if (shutdown.done === undefined) {
      shutdown.at = now;
      shutdown.done = (rolling ?? Promise.resolve()).catch(() => undefined).then(stopAll);
      return;
    }
    if (now - shutdown.at < sameSignalMs) return;
    say(`${signal} again: stopping at once.`);
    api?.kill();
    for (const host of hosts) host.process.kill();
    cluster.kill();
    process.exit(1);
  };
  for (const signal of stopSignals) process.on(signal, onSignal);
  /** Set once the cluster is running. */
  let deploy: (() => void) | undefined;
  // Handled from the start: the signal's default action would end `keel up` mid-start.
  process.on(deploySignal, () => {
    if (shuttingDown() !== undefined) return;
    if (deploy === undefined) say('A deploy was asked for before the cluster was running: ignored.');
    else deploy();
  });
  stopWhenOutputIsGone(() => {
    if (shuttingDown() === undefined) onSignal('SIGPIPE');
  });

  try {
    await requireFreePorts([apiPortUse(config), ...metricsPortUses(hostMetrics)]);
    const problem = portsProblem(ports);
    if (problem !== undefined) throw new Error(problem);
    const taken = await portsInUse(allPorts(ports));
    if (taken.length > 0)
      throw new Error(
        `ports ${taken.join(', ')} on 127.0.0.1 are in use (another cluster or dev server?): set KEEL_TEMPORAL_PORT (the services use it and the ports just above it, membership 300 below), KEEL_TEMPORAL_UI_PORT or KEEL_POSTGRES_PORT`,
      );
    await cluster.start();

    say('Bundling workflow code…');
    const bundlePath = await bundleWorkflows(config.dataDir, 0);
    /** A worker host's metrics endpoint, by its data dir. */
    const metricsOf = new Map<string, { host: string; port: number }>();
    const keelEnv = (dataDir: string, workflowBundle = bundlePath) =>
      childProcessEnvironment({
        TEMPORAL_ADDRESS: cluster.frontend,
        KEEL_ENCRYPTION_KEYS: encryptionKeys,
        KEEL_WORKFLOW_BUNDLE: workflowBundle,
        KEEL_LOG_FORMAT: process.stdout.isTTY ? 'pretty' : 'json',
        KEEL_DATA_DIR: dataDir,
        // One directory for every host: a thread's files follow it to whichever host runs its next tool.
        KEEL_WORKSPACES_DIR: config.workspacesDir,
        KEEL_WORKER_METRICS_PORT: String(metricsOf.get(dataDir)?.port ?? 'off'),
      });
    const spawnKeel = (
      name: string,
      command: string,
      dataDir: string,
      extra: Record<string, string> = {},
    ) => {
      const child = new Supervised({
        name,
        command: process.execPath,
        args: keelCommandArgs(command),
        cwd: packageRoot,
        env: { ...keelEnv(dataDir), ...extra },
        report: say,
        output: relay,
        graceMs: command === 'worker' ? (config.shutdownGraceS + 10) * 1000 : 15_000,
        onRefused: () => {
          exitCode = 1;
          onSignal('SIGTERM');
        },
      });
      child.start();
      return child;
    };
    // The API and every worker host (its memory tools, decision 0450) reach the store's database:
    // the cluster's PostgreSQL unless the configuration names another (decision 0435).
    const storeUrl = config.store.kind === 'postgres' ? config.store.url : cluster.storeUrl;
    const store: Record<string, string> = storeUrl === undefined ? {} : { KEEL_STORE_URL: storeUrl };
    for (let index = 1; index <= config.cluster.workerHosts; index++) {
      const name = `worker-${index}`;
      const dataDir = path.join(config.dataDir, 'hosts', name);
      await mkdir(dataDir, { recursive: true });
      const metrics = hostMetrics[index - 1];
      if (metrics !== undefined) metricsOf.set(dataDir, metrics);
      hosts.push({ name, dataDir, process: spawnKeel(name, 'worker', dataDir, store) });
    }
    api = spawnKeel('API', 'api', config.dataDir, store);
    const stopped = () => shuttingDown() !== undefined;
    await waitForReady(apiUrl, 120_000, stopped);
    // The banner names the Web UI: it must answer, and be ours (a UI server that lost its port restarts).
    const ui = cluster.process('ui');
    await waitForPage('The Temporal Web UI', cluster.uiUrl, 60_000, () => stopped() || ui.restarts > 0);
    if (ui.restarts > 0 && !stopped())
      throw new Error(
        `the Temporal Web UI server could not start (see ${shown(cluster.logsDirectory)}/ui.log)`,
      );
    // The banner names every worker host: each must poll, not only the one the API's readiness saw.
    const connection = await Connection.connect({
      address: cluster.frontend,
      interceptors: guardedInterceptors(),
    });
    try {
      for (const host of hosts) await waitUntilPolling(connection, config, host, 120_000, stopped);
    } finally {
      await connection.close();
    }
    for (const metrics of hostMetrics)
      await waitForPage("A worker host's metrics", metricsUrl(metrics), 60_000, stopped);
    const early = shuttingDown();
    if (early !== undefined) return await early;

    deploy = () => {
      if (rolling !== undefined) return;
      deploys++;
      rolling = rollWorkerHosts(config, cluster.frontend, hosts, deploys, keelEnv).finally(
        () => (rolling = undefined),
      );
    };
    say('');
    say('Keel is running on a Temporal cluster.');
    say(`  API        ${apiUrl}   (OpenAPI: ${apiUrl}/openapi.json)`);
    say(`  Chat       ${apiUrl}/`);
    say(
      `  Temporal   ${cluster.frontend}   (frontend; its HTTP API :${ports.frontendHttp}, history :${ports.grpc.history}, matching :${ports.grpc.matching})`,
    );
    say(`  Web UI     ${cluster.uiUrl}   (decrypts through ${apiUrl}/codec)`);
    say(
      `  Database   PostgreSQL 127.0.0.1:${ports.postgres}   (data in ${shown(path.join(cluster.directory, 'postgresql'))})`,
    );
    say(
      `  Workers    ${hosts
        .map((host) => {
          const metrics = metricsOf.get(host.dataDir);
          return `${host.name} (${shown(host.dataDir)}${metrics === undefined ? '' : `, metrics ${metricsUrl(metrics)}`})`;
        })
        .join(', ')}`,
    );
    say(`  Workspaces ${shown(config.workspacesDir)}   (shared by every worker host)`);
    say(`  Logs       ${shown(cluster.logsDirectory)}`);
    say(`  Model      ${modelBanner(config)}`);
    say('');
    say(`Deploy new Keel code: kill -USR2 ${process.pid} restarts the worker hosts one at a time.`);
    say('Ctrl-C stops everything; conversations are kept.');
  } catch (error) {
    if (!(error instanceof ClusterStopped))
      say(`keel up --cluster failed: ${error instanceof Error ? error.message : String(error)}`);
    shutdown.done ??= stopAll();
    await shutdown.done;
    return error instanceof ClusterStopped ? 0 : 1;
  }
  return whenShutDown(shuttingDown);
}
