import { chmod, mkdir, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../platform/config';
import { allSearchAttributes } from '../../common/search-attributes';
import {
  cachedBinaryPath,
  ensureClusterBinaries,
  temporalServerVersion,
  temporalUiVersion,
} from '../../launch/cluster/binaries';
import { dynamicConfigSource, historyShards, writeClusterConfig } from '../../launch/cluster/cluster-config';
import { createServer, type Server } from 'node:net';
import {
  allPorts,
  clusterPorts,
  portsInUse,
  portsProblem,
  temporalServices,
} from '../../launch/cluster/ports';
import { devServerArgs, dynamicConfigArgs, keelDynamicConfig } from '../../launch/dev-server';

describe("the cluster's ports", () => {
  it.each([
    [7233, { frontend: 7233, history: 7234, matching: 7235, worker: 7239 }, 6933, 7243],
    [20000, { frontend: 20000, history: 20001, matching: 20002, worker: 20006 }, 19700, 20010],
  ])('follow the frontend port %i the way Temporal defaults do', (frontend, grpc, membership, http) => {
    const ports = clusterPorts(frontend, 5433, 8233);
    expect(ports.grpc).toEqual(grpc);
    expect(ports.membership.frontend).toBe(membership);
    expect(ports.frontendHttp).toBe(http);
    expect(portsProblem(ports)).toBeUndefined();
  });

  it('refuses a frontend port whose membership ports overflow the smallint Temporal stores them in', () => {
    expect(portsProblem(clusterPorts(33_061, 5433, 8233))).toBeUndefined();
    expect(portsProblem(clusterPorts(33_062, 5433, 8233))).toMatch(/smallint.*33061 or less/);
  });

  it("checks every port the cluster opens, and not the worker service's gRPC port, which it never opens", async () => {
    const ports = clusterPorts(20_000, 5433, 8233);
    expect(allPorts(ports)).toEqual(
      expect.arrayContaining([20_000, 20_001, 20_002, 19_700, 19_701, 19_702, 19_706, 20_010, 5433, 8233]),
    );
    expect(allPorts(ports)).not.toContain(20_006);
    // Something listening on F + 6 does not stop a start; on F + 1 it does.
    const listen = (port: number) =>
      new Promise<Server>((resolve, reject) => {
        const server = createServer();
        server.once('error', reject);
        server.listen(port, '127.0.0.1', () => resolve(server));
      });
    const frontend = 25_100 + Math.floor(Math.random() * 400);
    const taken = await Promise.all([listen(frontend + 6), listen(frontend + 1)]);
    try {
      expect(
        await portsInUse(allPorts(clusterPorts(frontend, 5433, 8233)).filter((port) => port > 25_000)),
      ).toEqual([frontend + 1]);
    } finally {
      await Promise.all(taken.map((server) => new Promise((resolve) => server.close(resolve))));
    }
  });
});

describe("the cluster's generated config", () => {
  it('puts persistence and visibility on PostgreSQL with the postgres12 plugin, readable by its owner only', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'keel-cluster-config-'));
    const files = await writeClusterConfig({
      directory,
      ports: clusterPorts(7233, 5433, 8233),
      databaseUser: 'temporal',
      databasePassword: 'secret-password',
      namespace: 'default',
      uiCodecEndpoint: 'http://127.0.0.1:8080/codec',
    });
    const server = path.join(files.serverRoot, 'config', 'keel.yaml');
    const text = await readFile(server, 'utf8');
    expect(text.match(/pluginName: postgres12/g)).toHaveLength(2);
    expect(text).toContain('databaseName: temporal_visibility');
    expect(text).toContain('connectAddr: 127.0.0.1:5433');
    expect(text).toContain('bindOnLocalHost: true');
    expect(text).toMatch(/history:\n {4}rpc:\n {6}grpcPort: 7234\n {6}membershipPort: 6934/);
    expect((await stat(server)).mode & 0o077).toBe(0);
    const ui = await readFile(path.join(files.uiRoot, 'config', 'keel.yaml'), 'utf8');
    expect(ui).toContain('temporalGrpcAddress: 127.0.0.1:7233');
    expect(ui).toContain('endpoint: "http://127.0.0.1:8080/codec"');
  });
});

describe('docker-compose.yml', () => {
  it('runs the topology, versions and settings `keel up --cluster` runs', async () => {
    const compose = await readFile(path.resolve(__dirname, '../../docker-compose.yml'), 'utf8');
    expect(compose).toContain(`temporalio/server:${temporalServerVersion}`);
    expect(compose).toContain(`temporalio/admin-tools:${temporalServerVersion}`);
    expect(compose).toContain(`temporalio/ui:${temporalUiVersion}`);
    expect(compose).toContain(`NUM_HISTORY_SHARDS: ${historyShards}`);
    expect(compose).toContain('--retention 30d');
    for (const service of temporalServices) expect(compose).toContain(`SERVICES: ${service}`);
    // The dynamic config is one file, mounted there and copied here.
    expect(compose).toContain(`./${path.relative(path.resolve(__dirname, '../..'), dynamicConfigSource)}:`);
    // The CLI's names of the types: KEYWORD_LIST → KeywordList.
    const cliType = (type: string) =>
      type
        .toLowerCase()
        .split('_')
        .map((word) => word[0]!.toUpperCase() + word.slice(1))
        .join('');
    for (const key of allSearchAttributes) expect(compose).toContain(`${key.name}:${cliType(key.type)}`);
    // Two worker hosts sharing the workspaces volume, each with its own data dir.
    expect(compose).toMatch(
      /keel-worker:[\s\S]*KEEL_WORKSPACES_DIR: \/workspaces[\s\S]*scale: 2[\s\S]*- workspaces:\/workspaces/,
    );
  });
});

describe("finding the cluster's programs", () => {
  it('uses the cached builds, and says what to do when one is missing and Go is not installed', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'keel-cluster-bin-'));
    const config = parseConfig(
      { XDG_CACHE_HOME: path.join(root, 'cache'), PATH: path.join(root, 'empty') },
      root,
    );
    for (const key of ['server', 'sqlTool', 'uiServer'] as const) {
      const file = cachedBinaryPath(config.cacheDir, key);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, '#!/bin/sh\n');
      await chmod(file, 0o755);
    }
    expect(await ensureClusterBinaries(config, () => {})).toEqual({
      server: path.join(root, 'cache', 'keel', 'temporal-server', '1.29.1', 'temporal-server'),
      sqlTool: path.join(root, 'cache', 'keel', 'temporal-server', '1.29.1', 'temporal-sql-tool'),
      uiServer: path.join(root, 'cache', 'keel', 'temporal-ui', '2.42.1', 'temporal-ui-server'),
    });
    await chmod(cachedBinaryPath(config.cacheDir, 'uiServer'), 0o644);
    await expect(ensureClusterBinaries(config, () => {})).rejects.toThrow(
      /Web UI server v2\.42\.1 was not found and Go is not installed.*TEMPORAL_ADDRESS/,
    );
  });
});

describe("Keel's Temporal settings (decision 0260)", () => {
  it('are the same for the dev server, the tests and the cluster', async () => {
    const args = devServerArgs(
      { cliPath: 'temporal', dataDir: '/tmp', port: 7233, uiPort: 8233, namespace: 'default' },
      '/tmp/temporal.db',
    );
    const yaml = await readFile(dynamicConfigSource, 'utf8');
    expect(keelDynamicConfig.map(([key]) => key)).toEqual([
      'history.transferProcessorMaxPollRPS',
      'system.enableActivityEagerExecution',
    ]);
    for (const [key, value] of keelDynamicConfig) {
      const flag = `${key}=${JSON.stringify(value)}`;
      expect(args[args.indexOf(flag) - 1]).toBe('--dynamic-config-value');
      expect(dynamicConfigArgs()).toContain(flag);
      expect(yaml).toContain(`\n${key}:\n  - value: ${JSON.stringify(value)}\n    constraints: {}\n`);
    }
  });

  it("let a caller's flags come after Keel's, so that a later value of a key wins", () => {
    const args = devServerArgs(
      {
        cliPath: 'temporal',
        dataDir: '/tmp',
        port: 7233,
        uiPort: 8233,
        namespace: 'default',
        extraArgs: ['--dynamic-config-value', 'history.transferProcessorMaxPollRPS=20'],
      },
      '/tmp/temporal.db',
    );
    expect(args.lastIndexOf('history.transferProcessorMaxPollRPS=20')).toBeGreaterThan(
      args.indexOf('history.transferProcessorMaxPollRPS=1000'),
    );
  });
});
