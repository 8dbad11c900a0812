/**
 * `keel up --cluster` as an operator meets it: PostgreSQL, the four Temporal services, the Web UI,
 * two Keel worker hosts and the API as real processes. Conversations chat through the API while
 * the worker hosts are replaced one at a time (a rolling deploy, SIGUSR2), then while a worker
 * host, history, matching and the frontend are SIGKILLed and PostgreSQL restarts (requests all
 * through the database's outage answer 200 or 503); a worker host is SIGKILLed mid-model-call and
 * mid-command and kept down, and the other host finishes the run and reads the dead one's files;
 * then Ctrl-C, and a second start finds everything; a hang-up (SIGHUP) stops that one as Ctrl-C does.
 * A command cut off by the history or frontend outage says a Temporal service stopped; one cut off
 * by its worker host's death says its worker stopped (decision 0412). Each host serves metrics.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import pino from 'pino';
import { startApi } from '../../api/server';
import { parseConfig } from '../../platform/config';
import { startFakeAnthropic, type FakeAnthropic } from '../fakes/anthropic-server';
import { call } from '../helpers/api';
import { lastAnswer, TestConversation, toolResults } from '../helpers/conversation';
import { testDataConverter, testEncryptionKeys } from '../helpers/encryption';
import { startWorkerProcess } from '../helpers/worker-process';
import { IntakeLedger } from './api-chat';
import { buildBuild2Bundle } from './build-2/bundle';
import {
  anthropicModel,
  anyToolResponder,
  heartbeatRecorded,
  lines,
  userTexts,
  workerEnv,
} from './chaos-helpers';
import { IntakeLedger as Ledger, awaitRunEnd, submitUntilAccepted } from './api-chat';
import {
  type Cluster,
  childPid,
  descendants,
  programs,
  freeClusterPorts,
  keelUpCluster,
  activityIdentities,
  holdReplacement,
  holdServiceDown,
  hostOf,
  OutageProbe,
  pidOf,
  runningActivity,
  Traffic,
} from './cluster-helpers';
import { accepts, bannerOf, portsNamedIn, waitForOutput } from '../helpers/keel-up';
import { isAlive } from '../helpers/process-tree';
import { exportedByAll, unexportedQueries } from '../helpers/dashboard';
import { guardedInterceptors } from '../../api/gateway/grpc-closed-guard';

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
      ...(await freeClusterPorts(2)),
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
    expect(output).toContain(
      `Temporal   127.0.0.1:${env.KEEL_TEMPORAL_PORT}   (frontend; its HTTP API :${Number(env.KEEL_TEMPORAL_PORT) + 10}, history`,
    );
    expect(output).toContain(`Database   PostgreSQL 127.0.0.1:${env.KEEL_POSTGRES_PORT}`);
    // Each worker host serves its metrics by default, on its own port, named after it.
    const metrics = (host: number) =>
      `http://127.0.0.1:${Number(env.KEEL_WORKER_METRICS_PORT) + host - 1}/metrics`;
    expect(output).toContain(
      `Workers    worker-1 (${dataDir}/hosts/worker-1, metrics ${metrics(1)}), worker-2 (${dataDir}/hosts/worker-2, metrics ${metrics(2)})`,
    );
    for (const host of [1, 2]) {
      const scraped = await fetch(metrics(host));
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain('# TYPE keel_runs_total counter');
    }
    expect(output).toContain(`Workspaces ${dataDir}/workspaces   (shared by every worker host)`);
    expect((await fetch(`http://127.0.0.1:${env.KEEL_TEMPORAL_UI_PORT}/`)).status).toBe(200);
    // Every port the banner names listens (it once named the worker service's gRPC port, which
    // Temporal's worker service never opens), and the frontend's HTTP API answers.
    const frontend = Number(env.KEEL_TEMPORAL_PORT);
    const named = portsNamedIn(bannerOf(cluster!, 'Keel is running on a Temporal cluster.'));
    expect(named).toEqual(
      expect.arrayContaining([
        Number(env.KEEL_API_PORT),
        frontend,
        frontend + 10,
        frontend + 1,
        frontend + 2,
        Number(env.KEEL_TEMPORAL_UI_PORT),
        Number(env.KEEL_POSTGRES_PORT),
      ]),
    );
    expect(named).not.toContain(frontend + 6);
    expect(named).toEqual(
      expect.arrayContaining([
        Number(env.KEEL_WORKER_METRICS_PORT),
        Number(env.KEEL_WORKER_METRICS_PORT) + 1,
      ]),
    );
    const silent: number[] = [];
    for (const port of named) if (!(await accepts(port))) silent.push(port);
    expect(silent).toEqual([]);
    const namespaces = await fetch(`http://127.0.0.1:${frontend + 10}/api/v1/namespaces`);
    expect(namespaces.status).toBe(200);
    const processes = programs(cluster!.process.pid!).map((row) => row.args);
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

    // The Store API keeps its items in the cluster's PostgreSQL, in a database of its own (decision 0435).
    const put = await call(api, 'PUT', '/store/items', {
      namespace: ['cluster', 'prefs'],
      key: 'tea',
      value: { likes: 'green tea' },
    });
    expect(put.status).toBe(204);
    expect((await call(api, 'GET', '/store/items?namespace=cluster.prefs&key=tea')).body).toMatchObject({
      value: { likes: 'green tea' },
    });
    const password = (await readFile(path.join(dataDir!, 'cluster', 'postgres-password'), 'utf8')).trim();
    const database = new pg.Client({
      connectionString: `postgres://temporal:${password}@127.0.0.1:${env.KEEL_POSTGRES_PORT}/keel_store`,
    });
    await database.connect();
    const { rows } = await database.query<{ key: string }>('SELECT key FROM store_items');
    await database.end();
    expect(rows).toEqual([{ key: 'tea' }]);
    await expect(readFile(path.join(dataDir!, 'store.db'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('refuses nothing while each worker host is replaced in turn mid-conversation (SIGUSR2)', async () => {
    traffic.start();
    await traffic.progress(4, 120_000);
    traffic.ledger = new IntakeLedger();
    const rolling = traffic.ledger;
    const before = cluster!.output().length;
    cluster!.process.kill('SIGUSR2');
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
    const probe = new OutageProbe(api, traffic.threads[0]!, Number(env.KEEL_POSTGRES_PORT));
    /** A command running across a history or frontend outage, by the service that went down. */
    const cutOff: { service: string; threadId: string; ended: ReturnType<typeof awaitRunEnd> }[] = [];
    for (const [match, signal, said] of disruptions) {
      const before = cluster!.output().length;
      // Requests all through the database's outage, not only those the chatting threads happen to send.
      if (match === 'postgres -D ') probe.start();
      const outlasting = match === '--service history' || match === '--service frontend';
      if (outlasting) cutOff.push(await commandRunning(match));
      const killed = childPid(cluster!, match);
      process.kill(killed, signal);
      await waitForOutput(cluster!, said, 30_000, before);
      // Down for longer than the heartbeat timeout, so the command's call is surely given up on.
      if (outlasting) await holdServiceDown(cluster!, match, killed, 12_000);
      await traffic.progress(4, 180_000);
    }
    await probe.stop();
    await traffic.stop();
    const duringOutage = probe.answers.filter((answer) => answer.databaseDown);
    process.stderr.write(
      `cluster PostgreSQL outage probe: ${JSON.stringify(
        Object.entries(
          probe.answers.reduce<Record<string, number>>((counts, answer) => {
            const key = `${answer.databaseDown ? 'down' : 'up'} ${answer.request} ${answer.status} ${answer.code ?? ''}`;
            counts[key] = (counts[key] ?? 0) + 1;
            return counts;
          }, {}),
        ),
      )}\n`,
    );
    // The probe saw the database down, and every answer then and after was a success or the documented 503.
    expect(duringOutage.length).toBeGreaterThan(0);
    const undocumented = probe.answers.filter(
      (answer) =>
        !(
          answer.status === 200 ||
          (answer.status === 503 && answer.code !== undefined && answer.retryAfter !== null)
        ),
    );
    expect(undocumented).toEqual([]);
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
        // The worker hosts share the workspaces: a side effect ran once across all of them.
        const markers = await lines(path.join(dataDir!, 'workspaces', threadId, 'marker'));
        duplicates += markers.length - new Set(markers).size;
        expect(toolResults(transcript).length).toBeGreaterThan(0);
      }
      expect(duplicates).toBe(0);
      expect(fake.violations).toEqual([]);

      // No worker stopped: the command's result says a Temporal service did (decision 0412).
      for (const { service, threadId, ended } of cutOff) {
        expect({ service, status: (await ended).status }).toEqual({ service, status: 'completed' });
        const [result] = toolResults(await TestConversation.attach(client, threadId).transcript());
        expect({ service, result: result!.content }).toEqual({
          service,
          result:
            'Tool "bash" was interrupted (a Temporal service stopped or could not be reached: its worker still runs, but Temporal heard no heartbeat from it for 10 s) and may have partly run; it was not run again.',
        });
        expect(await lines(path.join(dataDir!, 'workspaces', threadId, 'marker'))).toEqual(['ran']);
      }
    } finally {
      await client.connection.close();
    }
    // The dashboard reads what this cluster serves: every metric it names, from the hosts and the API.
    const metricsPort = Number(env.KEEL_WORKER_METRICS_PORT);
    const endpoints = [`http://127.0.0.1:${metricsPort}`, `http://127.0.0.1:${metricsPort + 1}`, api];
    const scrapes = await Promise.all(
      endpoints.map(async (endpoint) => (await fetch(`${endpoint}/metrics`)).text()),
    );
    expect(await unexportedQueries(exportedByAll(scrapes))).toEqual([]);
  });

  describe('a worker host SIGKILLed and kept down, as a dead machine stays', () => {
    let client: Client;
    const sent = new Map<string, string[]>();

    beforeAll(async () => {
      client = new Client({
        connection: await Connection.connect({
          address: `127.0.0.1:${env.KEEL_TEMPORAL_PORT}`,
          interceptors: guardedInterceptors(),
        }),
        dataConverter: testDataConverter(),
      });
    });

    afterAll(async () => {
      fake.setResponder(anyToolResponder);
      await client?.connection.close();
    });

    /** One turn through the API, to its end. */
    const chat = async (threadId: string, text: string) => {
      const ledger = new Ledger();
      const turn = (sent.get(threadId)?.length ?? 0) + 1;
      sent.set(threadId, [...(sent.get(threadId) ?? []), text]);
      const run = await submitUntilAccepted(api, threadId, text, ledger, {
        runId: `turn-${turn}`,
        create: turn === 1,
        deadline: Date.now() + 120_000,
      });
      return awaitRunEnd(api, threadId, run.run_id, ledger, Date.now() + 180_000);
    };

    const until = async (condition: () => boolean | Promise<boolean>, what: string) => {
      const deadline = Date.now() + 60_000;
      while (!(await condition())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await sleep(100);
      }
    };

    /** Waits until the thread's activity of this type runs on some host; that host's name and pid. */
    const runningOn = async (threadId: string, activity: 'callModel' | 'runTool') => {
      const handle = TestConversation.attach(client, threadId).handle;
      const deadline = Date.now() + 60_000;
      for (;;) {
        const identity = await runningActivity(handle, activity).catch(() => undefined);
        if (identity !== undefined) {
          const pid = pidOf(identity);
          const host = await hostOf(pid);
          if (host !== undefined) return { pid, host };
        }
        if (Date.now() > deadline) throw new Error(`no ${activity} of ${threadId} running`);
        await sleep(200);
      }
    };

    /** SIGKILLs the host's worker process and keeps its replacement from polling until `release`. */
    const killAndHold = async (running: { pid: number; host: string }) => {
      const hold = holdReplacement(cluster!, running.host, running.pid);
      const before = cluster!.output().length;
      process.kill(running.pid, 'SIGKILL');
      await waitForOutput(cluster!, `${running.host} stopped unexpectedly (SIGKILL)`, 30_000, before);
      await hold.held;
      return hold;
    };

    it('finishes a run cut mid-model-call on the other host, with one assistant message', async () => {
      const threadId = `killed-model-${randomUUID()}`;
      const text = `a slow answer for ${threadId}`;
      let slow = 0;
      fake.setResponder((request, index) => {
        const last = request.messages.at(-1)!;
        const said = typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
        // The first call streams slowly, so the kill lands while it is in flight; the retry is quick.
        if (said.includes(text) && slow++ === 0)
          return {
            kind: 'message',
            content: [{ type: 'text', text: 'cut off mid-stream '.repeat(60) }],
            tokenDelayMs: 200,
          };
        return anyToolResponder(request, index);
      });
      let running: { pid: number; host: string } | undefined;
      let hold: Awaited<ReturnType<typeof killAndHold>> | undefined;
      try {
        const ended = chat(threadId, text);
        running = await runningOn(threadId, 'callModel');
        // The model's reply is streaming to this host (its first tokens are out) when it dies.
        await until(() => slow > 0, 'the model call to reach the fake');
        await sleep(1_000);
        hold = await killAndHold(running);
        const done = await ended;
        expect(done.status).toBe('completed');
        const conversation = TestConversation.attach(client, threadId);
        const transcript = await conversation.transcript();
        expect(userTexts(transcript)).toEqual([text]);
        expect(transcript.filter((message) => message.role === 'assistant')).toHaveLength(1);
        expect(lastAnswer(transcript)).toBe(`You said: ${text}`);
        // The call that finished ran on the other host.
        const calls = (await activityIdentities(conversation.handle)).filter(
          (row) => row.activity === 'callModel',
        );
        expect(await hostOf(pidOf(calls.at(-1)!.identity))).toBe(
          running.host === 'worker-1' ? 'worker-2' : 'worker-1',
        );
        expect(slow).toBeGreaterThanOrEqual(2);
        expect(fake.violations).toEqual([]);
      } finally {
        await hold?.release();
        fake.setResponder(anyToolResponder);
      }
    });

    it('interrupts a tool cut mid-command once, and the next tool on the other host reads the files it wrote', async () => {
      const threadId = `killed-tool-${randomUUID()}`;
      const workspace = path.join(dataDir!, 'workspaces', threadId);
      let hold: Awaited<ReturnType<typeof killAndHold>> | undefined;
      try {
        const ended = chat(
          threadId,
          'run: echo written-before-the-kill > note; echo ran >> marker; sleep 60',
        );
        // Provably running: its first side effect is on disk and the activity is still started.
        await until(
          async () => (await lines(path.join(workspace, 'marker'))).length > 0,
          `the command's first side effect in the shared workspaces (${workspace})`,
        );
        const running = await runningOn(threadId, 'runTool');
        // Its heartbeat named the host: the workflow can ask it after the timeout (decision 0412).
        await heartbeatRecorded(TestConversation.attach(client, threadId).handle, 'runTool');
        hold = await killAndHold(running);
        const done = await ended;
        expect(done.status).toBe('completed');
        const other = running.host === 'worker-1' ? 'worker-2' : 'worker-1';
        const conversation = TestConversation.attach(client, threadId);
        // One attempt for a side-effecting tool: the model hears it was interrupted, and it never ran again.
        const [interrupted] = toolResults(await conversation.transcript());
        expect(interrupted).toMatchObject({ is_error: true });
        // Its worker stopped, and the result says so (decision 0412).
        expect(interrupted!.content).toBe(
          'Tool "bash" was interrupted (its worker stopped: Temporal heard no heartbeat from it for 10 s, and it no longer answers) and may have partly run; it was not run again.',
        );
        expect(await lines(path.join(workspace, 'marker'))).toEqual(['ran']);

        // The next tool runs on the only host left, and finds the file the dead host's tool wrote.
        expect((await chat(threadId, 'run: cat note; ls')).status).toBe('completed');
        const transcript = await conversation.transcript();
        const read = toolResults(transcript).at(-1)!;
        expect(read.is_error).toBeFalsy();
        expect(read.content).toContain('written-before-the-kill');
        const tools = (await activityIdentities(conversation.handle)).filter(
          (row) => row.activity === 'runTool',
        );
        expect(await hostOf(pidOf(tools.at(-1)!.identity))).toBe(other);
        expect(userTexts(transcript)).toEqual(sent.get(threadId));
        expect(fake.violations).toEqual([]);
      } finally {
        await hold?.release();
      }
    });
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

  /**
   * Starts a side-effecting command on a thread of its own that runs for 40 s, and resolves once
   * it has run (its marker is on disk) and its first heartbeat has reached Temporal.
   */
  async function commandRunning(service: string) {
    const threadId = `outage-${service.replace(/\W+/g, '')}-${randomUUID()}`;
    const ledger = new Ledger();
    const run = await submitUntilAccepted(api, threadId, 'run: echo ran >> marker; sleep 40', ledger, {
      runId: 'turn-1',
      create: true,
      deadline: Date.now() + 120_000,
    });
    const ended = awaitRunEnd(api, threadId, run.run_id, ledger, Date.now() + 240_000);
    // Read after the outages; a failure meanwhile is not left unhandled.
    ended.catch(() => undefined);
    const marker = path.join(dataDir!, 'workspaces', threadId, 'marker');
    const deadline = Date.now() + 60_000;
    while ((await lines(marker)).length === 0) {
      if (Date.now() > deadline) throw new Error(`the command of ${threadId} did not start`);
      await sleep(200);
    }
    const connection = await Connection.connect({
      address: `127.0.0.1:${env.KEEL_TEMPORAL_PORT}`,
      interceptors: guardedInterceptors(),
    });
    try {
      const client = new Client({ connection, dataConverter: testDataConverter() });
      await heartbeatRecorded(TestConversation.attach(client, threadId).handle, 'runTool');
    } finally {
      await connection.close();
    }
    return { service, threadId, ended };
  }

  /** Ends the running cluster with `signal` and finds it exited 0 with every process it started gone. */
  async function stopCluster(signal: NodeJS.Signals): Promise<void> {
    const running = cluster!;
    const started = descendants(running.process.pid!);
    expect(started.length).toBeGreaterThan(0);
    running.process.kill(signal);
    expect(await running.exited).toBe(0);
    expect(running.output()).toContain('Keel stopped.');
    // Helpers of the processes (tsx's esbuild service) leave when their parent has gone.
    const alive = () => started.filter((row) => isAlive(row.pid));
    const deadline = Date.now() + 15_000;
    while (alive().length > 0 && Date.now() < deadline) await sleep(250);
    expect(alive()).toEqual([]);
  }

  it('stops everything in order on Ctrl-C, and the next start finds every conversation; a hang-up stops that one too', async () => {
    await stopCluster('SIGINT');

    cluster = keelUpCluster(env);
    await waitForOutput(cluster, 'Keel is running on a Temporal cluster.', 240_000);
    for (const threadId of traffic.threads) {
      // Right after the start a read may find no worker warm yet: the API's documented answer is
      // 503 with Retry-After, and the promise is that the conversation is there once one is.
      const readBy = Date.now() + 60_000;
      let state = await call<{ values: { messages: unknown[] } }>(api, 'GET', `/threads/${threadId}/state`);
      while (state.status === 503 && Date.now() < readBy) {
        await sleep(1_000);
        state = await call<{ values: { messages: unknown[] } }>(api, 'GET', `/threads/${threadId}/state`);
      }
      expect(state.status).toBe(200);
      expect(state.body.values.messages.length).toBeGreaterThan(traffic.sent.get(threadId)!.length);
    }
    // A closed terminal: SIGHUP used to be the rolling deploy's trigger (now SIGUSR2, decision 0331).
    await stopCluster('SIGHUP');
  });
});
