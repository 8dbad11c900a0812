/**
 * Cancels Temporal calls in flight by the thousand and says whether the server still answers
 * (decision 0470): the dev server's one SQLite connection can stay `interrupted (9)` for good
 * after a cancel lands between a query's first row and its return (modernc.org/sqlite then drops
 * the open statement, so the interrupt is never cleared). Its calls are the kinds Keel's API
 * cancels when a stream closes: long polls of history and of a task queue, updates, describes,
 * signals, starts and lists, each aborted after 0–`STORM_MAX_MS` ms (default 150).
 *
 *   npx tsx bench/temporal-cancel-storm.ts dev-server|dev-server-file|cluster|<address> [rounds] [calls per round]
 *
 * `dev-server` starts an in-memory dev server as each test file gets, `dev-server-file` one on a
 * SQLite file as `npm start` runs it, `cluster` the test environment's Temporal on PostgreSQL
 * (test/setup/temporal-cluster.ts). Measured: the dev server on the CLI's own driver broke after
 * 26 800 cancelled calls (round 67 of 80 × 400, 363 s); the cluster answered after all 32 000
 * (decision 0470); the dev server on the mended driver, in memory and on a file: decision 0495.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { parseConfig } from '../platform/config';
import { startDevServer } from '../launch/dev-server';
import { ensureTemporalCli } from '../launch/temporal-cli';
import { startTestCluster } from '../test/setup/temporal-cluster';
import { freePort } from './harness';

const [target = 'dev-server', roundsArg = '80', callsArg = '400'] = process.argv.slice(2);
const maxCancelMs = Number(process.env.STORM_MAX_MS ?? 150);
const namespace = 'default';
const taskQueue = `storm-${randomUUID()}`;

/** The server under test: its address and how to stop it (nothing for one given by address). */
async function server(): Promise<{ address: string; stop: () => Promise<void> }> {
  if (target !== 'dev-server' && target !== 'dev-server-file' && target !== 'cluster')
    return { address: target, stop: () => Promise.resolve() };
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'keel-storm-'));
  const started = Date.now();
  const running =
    target === 'cluster'
      ? await startTestCluster(dataDir, (line) => console.log(line))
      : await startDevServer({
          cliPath: await ensureTemporalCli(parseConfig(process.env, process.cwd()), (line) =>
            console.log(line),
          ),
          dataDir,
          inMemory: target === 'dev-server',
          port: await freePort(),
          uiPort: await freePort(),
          namespace,
          extraArgs: ['--headless'],
        });
  console.log(
    `${target} at ${running.address}, serving after ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return { address: running.address, stop: () => running.stop() };
}

async function main(): Promise<void> {
  const { address, stop } = await server();
  const connection = await Connection.connect({ address });
  const service = connection.workflowService;
  const ids: string[] = [];
  for (let index = 0; index < 20; index += 1) {
    const workflowId = `storm-${randomUUID()}`;
    await service.startWorkflowExecution({
      namespace,
      workflowId,
      requestId: randomUUID(),
      workflowType: { name: 'nothing' },
      taskQueue: { name: taskQueue },
    });
    ids.push(workflowId);
  }
  const pick = (): string => ids[Math.floor(Math.random() * ids.length)]!;
  const calls: Array<() => Promise<unknown>> = [
    () =>
      service.getWorkflowExecutionHistory({
        namespace,
        execution: { workflowId: pick() },
        waitNewEvent: true,
        historyEventFilterType: 2,
      }),
    () => service.pollWorkflowTaskQueue({ namespace, taskQueue: { name: taskQueue }, identity: 'storm' }),
    () =>
      service.updateWorkflowExecution({
        namespace,
        workflowExecution: { workflowId: pick() },
        waitPolicy: { lifecycleStage: 2 },
        request: { meta: { updateId: randomUUID() }, input: { name: 'x' } },
      }),
    () => service.describeWorkflowExecution({ namespace, execution: { workflowId: pick() } }),
    () =>
      service.signalWorkflowExecution({
        namespace,
        workflowExecution: { workflowId: pick() },
        signalName: 's',
        requestId: randomUUID(),
      }),
    () =>
      service.startWorkflowExecution({
        namespace,
        workflowId: `storm-${randomUUID()}`,
        requestId: randomUUID(),
        workflowType: { name: 'nothing' },
        taskQueue: { name: taskQueue },
      }),
    () => service.listWorkflowExecutions({ namespace, pageSize: 50 }),
  ];
  const rounds = Number(roundsArg);
  const perRound = Number(callsArg);
  const started = Date.now();
  for (let round = 1; round <= rounds; round += 1) {
    await Promise.all(
      Array.from({ length: perRound }, async () => {
        const controller = new AbortController();
        const call = calls[Math.floor(Math.random() * calls.length)]!;
        setTimeout(() => controller.abort(), Math.random() * maxCancelMs);
        await connection.withAbortSignal(controller.signal, call).catch(() => undefined);
      }),
    );
    try {
      await connection.withDeadline(Date.now() + 5_000, () =>
        service
          .listWorkflowExecutions({ namespace, pageSize: 1 })
          .then(() => service.describeWorkflowExecution({ namespace, execution: { workflowId: pick() } })),
      );
    } catch (error) {
      console.log(
        `round ${round}: broken after ${round * perRound} cancelled calls, ${Math.round((Date.now() - started) / 1000)} s: ${error instanceof Error ? error.message : String(error)}`,
      );
      await connection.close();
      await stop();
      process.exitCode = 1;
      return;
    }
  }
  console.log(
    `survived ${rounds * perRound} cancelled calls in ${Math.round((Date.now() - started) / 1000)} s`,
  );
  await connection.close();
  await stop();
}

void main();
