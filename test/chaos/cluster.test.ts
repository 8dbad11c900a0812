/**
 * `keel up --cluster` as an operator meets it: PostgreSQL, the four Temporal services, the Web UI,
 * two Keel worker hosts and the API as real processes. Conversations chat through the API while
 * the worker hosts are replaced one at a time (a rolling deploy, SIGHUP), then while the history
 * and the matching services are SIGKILLed; then Ctrl-C, and a second start finds everything.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import pino from 'pino';
import { startApi } from '../../api/server';
import { parseConfig } from '../../common/config';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-server';
import { call } from '../helpers/api';
import { TestConversation, toolResults } from '../helpers/conversation';
import { testDataConverter, testEncryptionKeys } from '../helpers/encryption';
import { startWorkerProcess } from '../helpers/worker-process';
import { IntakeLedger } from './api-chat';
import { buildBuild2Bundle } from './build-2/bundle';
import { anthropicModel, anyToolResponder, lines, userTexts, workerEnv } from './chaos-helpers';
import {
  type Cluster,
  childPid,
  descendants,
  freeClusterPorts,
  keelUpCluster,
  Traffic,
} from './cluster-helpers';
import { waitForOutput } from '../helpers/keel-up';
import { guardedInterceptors } from '../../api/grpc-closed-guard';

jest.setTimeout(480_000);

describe('keel up --cluster', () => {
  let fake: FakeAnthropic;
  let cluster: Cluster | undefined;
  let env: Record<string, string>;
  let dataDir: string | undefined;
  let api: string;
  let traffic: Traffic;

  beforeAll(async () => {
    fake = await startFakeAnthropic({ responder: anyToolResponder });
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'keel-cluster-'));
    env = {
      ...(await freeClusterPorts()),
      KEEL_DATA_DIR: dataDir,
      KEEL_CLUSTER_WORKERS: '2',
      KEEL_ENCRYPTION_KEYS: testEncryptionKeys,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: fake.url,
      KEEL_MODEL: anthropicModel.model,
      KEEL_SHUTDOWN_GRACE: '10',
      KEEL_LOG_LEVEL: 'warn',
    };
    api = `http://127.0.0.1:${env.KEEL_API_PORT}`;
    cluster = keelUpCluster(env);
    // The first start creates the database and its schemas; on a machine without the Temporal
    // programs in ~/.cache/keel it first builds them with go install (minutes, once).
    await waitForOutput(cluster, 'Keel is running on a Temporal cluster.', 1_200_000);
    traffic = new Traffic(
      api,
      Array.from({ length: 4 }, () => `cluster-${randomUUID()}`),
    );
  }, 1_300_000);

  afterAll(async () => {
    await traffic?.stop();
    if (cluster !== undefined && cluster.process.exitCode === null) {
      const left = descendants(cluster.process.pid!);
      cluster.process.kill('SIGINT');
      const stopped = await Promise.race([cluster.exited, sleep(90_000, 'timeout', { ref: false })]);
      if (stopped === 'timeout') for (const row of left) process.kill(row.pid, 'SIGKILL');
    }
    await fake?.close();
    // A PostgreSQL cluster and every host's workspaces: tens of megabytes per run.
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  it('prints where everything is; the Web UI and visibility on PostgreSQL answer', async () => {
    const output = cluster!.output();
    expect(output).toContain(`API        ${api}`);
    expect(output).toContain(`Temporal   127.0.0.1:${env.KEEL_TEMPORAL_PORT}   (frontend; history`);
    expect(output).toContain(`Database   PostgreSQL 127.0.0.1:${env.KEEL_POSTGRES_PORT}`);
    expect(output).toMatch(/Workers {4}worker-1 \(.*hosts\/worker-1\), worker-2 \(.*hosts\/worker-2\)/);
    expect((await fetch(`http://127.0.0.1:${env.KEEL_TEMPORAL_UI_PORT}/`)).status).toBe(200);
    const processes = descendants(cluster!.process.pid!).map((row) => row.args);
    for (const service of ['frontend', 'history', 'matching', 'worker'])
      expect(processes.filter((args) => args.includes(`--service ${service}`))).toHaveLength(1);
    expect(processes.filter((args) => /postgres -D /.test(args))).toHaveLength(1);
    expect(processes.filter((args) => args.includes('keel.ts worker'))).toHaveLength(2);

    const created = await call(api, 'POST', '/threads', { thread_id: 'visible', metadata: { team: 'ops' } });
    expect(created.status).toBe(200);
    // Search goes through Temporal's visibility store, here PostgreSQL with Keel's search attributes.
    const deadline = Date.now() + 30_000;
    let found: unknown[] = [];
    while (found.length === 0 && Date.now() < deadline) {
      found = (await call<unknown[]>(api, 'POST', '/threads/search', { metadata: { team: 'ops' } })).body;
      if (found.length === 0) await sleep(500);
    }
    expect(found).toEqual([expect.objectContaining({ thread_id: 'visible' })]);
  });

  it('refuses nothing while each worker host is replaced in turn mid-conversation (SIGHUP)', async () => {
    traffic.start();
    await traffic.progress(4, 120_000);
    traffic.ledger = new IntakeLedger();
    const rolling = traffic.ledger;
    const before = cluster!.output().length;
    cluster!.process.kill('SIGHUP');
    await waitForOutput(cluster!, 'Rolling deploy done: 2 worker hosts replaced.', 180_000, before);
    await traffic.progress(4, 120_000);
    expect(cluster!.output().slice(before)).toMatch(
      /worker-1 replaced \(pid \d+ → \d+\)[\s\S]*worker-2 replaced/,
    );
    expect({
      refused: rolling.refused,
      reasons: Object.fromEntries(rolling.refusals),
      failures: traffic.failures,
    }).toEqual({ refused: 0, reasons: {}, failures: [] });
  });

  it('completes every turn when a worker host, history, matching and the frontend are SIGKILLed and PostgreSQL restarts, answering 503 and never 500 meanwhile', async () => {
    traffic.ledger = new IntakeLedger();
    const crashes = traffic.ledger;
    const disruptions: [match: string, signal: NodeJS.Signals, said: string][] = [
      ['keel.ts worker', 'SIGKILL', 'stopped unexpectedly (SIGKILL)'],
      ['--service history', 'SIGKILL', 'history stopped unexpectedly (SIGKILL)'],
      ['--service matching', 'SIGKILL', 'matching stopped unexpectedly (SIGKILL)'],
      // The API's door while the frontend is gone: 503, never 500.
      ['--service frontend', 'SIGKILL', 'frontend stopped unexpectedly (SIGKILL)'],
      // SIGINT is PostgreSQL's fast shutdown: every session is cut, and the supervisor restarts it.
      ['postgres -D ', 'SIGINT', 'postgresql stopped unexpectedly'],
    ];
    for (const [match, signal, said] of disruptions) {
      const before = cluster!.output().length;
      process.kill(childPid(cluster!, match), signal);
      await waitForOutput(cluster!, said, 30_000, before);
      await traffic.progress(4, 180_000);
    }
    await traffic.stop();
    process.stderr.write(
      `cluster crashes: ${JSON.stringify({ refusals: Object.fromEntries(crashes.refusals), unavailable_reads: Object.fromEntries(crashes.unavailableReads), turns_completed: traffic.completed })}\n`,
    );
    const statuses = [...crashes.refusals.keys(), ...crashes.unavailableReads.keys()].map(
      (reason) => reason.split(' ')[0],
    );
    expect(statuses.filter((status) => status !== '503' && status !== '0')).toEqual([]);
    expect(traffic.failures).toEqual([]);

    const client = new Client({
      connection: await Connection.connect({
        address: `127.0.0.1:${env.KEEL_TEMPORAL_PORT}`,
        interceptors: guardedInterceptors(),
      }),
      dataConverter: testDataConverter(),
    });
    try {
      let duplicates = 0;
      for (const threadId of traffic.threads) {
        const transcript = await TestConversation.attach(client, threadId).transcript();
        const texts = userTexts(transcript);
        // Nothing lost, nothing doubled: every message the client sent is there once.
        expect(texts).toEqual(traffic.sent.get(threadId));
        // Each worker host has its own workspace; a side effect ran once across all of them.
        const markers = (
          await Promise.all(
            ['worker-1', 'worker-2'].map((host) =>
              lines(path.join(dataDir!, 'hosts', host, 'workspaces', threadId, 'marker')),
            ),
          )
        ).flat();
        duplicates += markers.length - new Set(markers).size;
        expect(toolResults(transcript).length).toBeGreaterThan(0);
      }
      expect(duplicates).toBe(0);
      expect(fake.violations).toEqual([]);
    } finally {
      await client.connection.close();
    }
  });

  it('rolls a build 2 with a new step in the loop out worker by worker: no non-determinism, new conversations run it, running ones take it at their next model call', async () => {
    const frontend = `127.0.0.1:${env.KEEL_TEMPORAL_PORT}`;
    const deployDir = await mkdtemp(path.join(os.tmpdir(), 'keel-deploy-'));
    const config = parseConfig(
      {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        TEMPORAL_ADDRESS: frontend,
        KEEL_TASK_QUEUE: `deploy-${randomUUID()}`,
        KEEL_DATA_DIR: deployDir,
        KEEL_ENCRYPTION_KEYS: testEncryptionKeys,
        ANTHROPIC_API_KEY: 'test-key',
        ANTHROPIC_BASE_URL: fake.url,
        KEEL_MODEL: anthropicModel.model,
      },
      process.cwd(),
    );
    const build2 = path.join(deployDir, 'workflow-bundle-build-2.js');
    await writeFile(build2, await buildBuild2Bundle());
    const workerOn = (bundle: string) =>
      startWorkerProcess({
        env: {
          ...workerEnv(config, fake, { KEEL_SHUTDOWN_GRACE: '10' }),
          TEMPORAL_ADDRESS: frontend,
          KEEL_WORKFLOW_BUNDLE: bundle,
        },
      });
    const workers = [
      await workerOn(process.env.KEEL_TEST_BUNDLE!),
      await workerOn(process.env.KEEL_TEST_BUNDLE!),
    ];
    const client = new Client({
      connection: await Connection.connect({ address: frontend, interceptors: guardedInterceptors() }),
      dataConverter: testDataConverter(),
    });
    const api = await startApi({
      client,
      config,
      logger: pino({ level: 'error' }, pino.destination(2)),
      host: '127.0.0.1',
      port: 0,
    });
    const build = async (threadId: string) =>
      (await TestConversation.attach(client, threadId).handle.describe()).memo?.keel_build;
    const running = new Traffic(
      api.url,
      Array.from({ length: 3 }, () => `deploy-old-${randomUUID()}`),
    );
    const fresh = new Traffic(
      api.url,
      Array.from({ length: 2 }, () => `deploy-new-${randomUUID()}`),
    );
    try {
      running.start();
      await running.progress(3, 120_000);
      for (const threadId of running.threads) expect(await build(threadId)).toBeUndefined();
      // The rolling deploy: each build-1 worker drains and a build-2 worker takes its place.
      for (let index = 0; index < workers.length; index++) {
        workers[index]!.kill('SIGTERM');
        await workers[index]!.exited;
        workers[index] = await workerOn(build2);
        await running.progress(2, 120_000);
      }
      fresh.start();
      // Every conversation makes a model call on build 2: the running ones take the new step there.
      await Promise.all([fresh.progressEach(2, 120_000), running.progressEach(2, 120_000)]);
      await Promise.all([running.stop(), fresh.stop()]);
      expect([...running.failures, ...fresh.failures]).toEqual([]);
      expect(running.ledger.refused + fresh.ledger.refused).toBe(0);
      for (const threadId of [...running.threads, ...fresh.threads]) {
        expect({ threadId, build: await build(threadId) }).toEqual({ threadId, build: 2 });
        // Every run of the conversation (continue-as-new included): no workflow task ever failed.
        const workflowId = TestConversation.attach(client, threadId).handle.workflowId;
        for await (const execution of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
          const history = await client.workflow.getHandle(workflowId, execution.runId).fetchHistory();
          const failed = (history.events ?? []).filter(
            (event) => (event.workflowTaskFailedEventAttributes ?? undefined) !== undefined,
          );
          expect({ threadId, failed }).toEqual({ threadId, failed: [] });
        }
        expect(userTexts(await TestConversation.attach(client, threadId).transcript())).toEqual(
          (running.sent.get(threadId) ?? fresh.sent.get(threadId))!,
        );
      }
      expect(fake.violations).toEqual([]);
    } finally {
      await rm(deployDir, { recursive: true, force: true });
      // After a failure: no new turns (a turn in flight ends at its own deadline).
      void running.stop();
      void fresh.stop();
      await api.stop();
      for (const worker of workers) worker.kill('SIGKILL');
      await Promise.all(workers.map((worker) => worker.exited));
      await client.connection.close();
    }
  });

  it('stops everything in order on Ctrl-C, and the next start finds every conversation', async () => {
    const running = cluster!;
    const started = descendants(running.process.pid!);
    running.process.kill('SIGINT');
    expect(await running.exited).toBe(0);
    expect(running.output()).toContain('Keel stopped.');
    // Helpers of the processes (tsx's esbuild service) leave when their parent has gone.
    const alive = () =>
      started.filter((row) => {
        try {
          process.kill(row.pid, 0);
          return true;
        } catch {
          return false;
        }
      });
    const deadline = Date.now() + 15_000;
    while (alive().length > 0 && Date.now() < deadline) await sleep(250);
    expect(alive()).toEqual([]);

    cluster = keelUpCluster(env);
    await waitForOutput(cluster, 'Keel is running on a Temporal cluster.', 240_000);
    for (const threadId of traffic.threads) {
      const state = await call<{ values: { messages: unknown[] } }>(api, 'GET', `/threads/${threadId}/state`);
      expect(state.status).toBe(200);
      expect(state.body.values.messages.length).toBeGreaterThan(traffic.sent.get(threadId)!.length);
    }
  });
});
