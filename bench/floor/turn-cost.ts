/**
 * Temporal's own floor for a turn of the shape Keel's tool turn has, with no Keel code: the dev
 * server as Keel runs it (its dynamic config, decision 0260), the floor worker with Keel's worker
 * tuning, and a client in this process. The workflow (`floorConversation`) is a long-lived
 * conversation that takes a turn by an update answered when the turn ends, as Keel's
 * `submitInput` with `{ wait: true }`; a turn is a model call, a tool call and a model call, each
 * a no-op activity. The client drives it as Keel's API does: the thread's first turn by
 * update-with-start, the others by update, each waiting for ACCEPTED and then for the result.
 *
 * Shapes (`--shapes`, all by default):
 * - `activities`: the model calls as ordinary activities, Keel's two search-attribute writes a
 *   turn (busy, idle): Keel's default tool turn, 25 events.
 * - `local`: the model calls as local activities, same writes: Keel's with
 *   `KEEL_LOCAL_MODEL_CALLS=1`, 15 events.
 * - `activities-bare`, `local-bare`: the same without the search-attribute writes (23 and 13).
 *
 * Per shape and round: one thread taking `--turns` turns one after the other, then `--threads`
 * threads at once taking `--per-thread` each. Per turn: CPU of the dev server's process tree, the
 * worker's and this client's (over the phase, divided by its turns), execution on the server's
 * clock (the turn's first workflow task started → its last one completed, as the peer benchmark
 * times Keel's turns, and update accepted → update completed), client latency, events per turn
 * counted from the histories. `--payload-kib N` makes every payload of a turn (the update's input
 * and answer, each activity's input and result) N KiB of random bytes, as Keel's encrypted ones
 * are incompressible. Raw figures go to `bench/results/floor-turn-cost-<timestamp>.json`.
 *
 *   npx tsx bench/floor/turn-cost.ts [--rounds 3] [--turns 50] [--threads 20] [--per-thread 5]
 *     [--shapes activities,local,activities-bare,local-bare] [--payload-kib 0] [--tuning keel|sdk]
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { parseConfig } from '../../platform/config';
import { startDevServer } from '../../launch/dev-server';
import { ensureTemporalCli } from '../../launch/temporal-cli';
import { freePort, spawnNode } from '../harness';
import { markdownTable } from '../report';
import { treeCpuSeconds } from '../sampler';
import { percentile, showSpread, spread } from '../stats';
import { floorCloseSignal, type FloorConversationOptions } from './conversation';
import { converse, type FloorTurn, floorTurns } from './turns';

interface Shape extends FloorConversationOptions {
  name: string;
  what: string;
  /** Keel's events for the same turn (bench/results/history.md, "Cheaper turns"), when it has this shape. */
  keelEvents?: number;
}

const allShapes: Shape[] = [
  {
    name: 'activities',
    what: "model calls as activities, Keel's search-attribute writes (Keel's default)",
    localModelCalls: false,
    searchAttributes: true,
    keelEvents: 25,
  },
  {
    name: 'local',
    what: "model calls as local activities, Keel's search-attribute writes (KEEL_LOCAL_MODEL_CALLS=1)",
    localModelCalls: true,
    searchAttributes: true,
    keelEvents: 15,
  },
  {
    name: 'activities-bare',
    what: 'model calls as activities, no search-attribute writes',
    localModelCalls: false,
    searchAttributes: false,
  },
  {
    name: 'local-bare',
    what: 'model calls as local activities, no search-attribute writes',
    localModelCalls: true,
    searchAttributes: false,
  },
];

/** One turn as the client saw it and the history recorded it. */
interface TurnRecord extends FloorTurn {
  thread: string;
  clientMs: number;
}

interface PhaseResult {
  shape: string;
  phase: 'sequential' | 'concurrent';
  round: number;
  threads: number;
  turns: number;
  seconds: number;
  /** CPU ms per turn, per process (tree). */
  cpuMsPerTurn: { server: number; worker: number; client: number };
  loadBefore: number;
  loadAfter: number;
  records: TurnRecord[];
}

const loadAverage = async (): Promise<number> =>
  Number((await readFile('/proc/loadavg', 'utf8')).split(' ')[0]);

const clientCpuSeconds = (): number => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
};

interface Context {
  client: Client;
  taskQueue: string;
  serverPid: number;
  workerPid: number;
  payload: string;
}

/** Takes `turns` turns on a new thread of `shape`, one after the other; client ms of each. */
function converseAs(context: Context, shape: Shape, workflowId: string, turns: number): Promise<number[]> {
  const options = { localModelCalls: shape.localModelCalls, searchAttributes: shape.searchAttributes };
  return converse(context.client, context.taskQueue, options, workflowId, turns, context.payload);
}

async function phase(
  context: Context,
  shape: Shape,
  kind: PhaseResult['phase'],
  round: number,
  threads: number,
  perThread: number,
): Promise<PhaseResult> {
  const ids = Array.from({ length: threads }, () => `floor-turn-${shape.name}-${randomUUID()}`);
  const loadBefore = await loadAverage();
  const serverBefore = await treeCpuSeconds(context.serverPid);
  const workerBefore = await treeCpuSeconds(context.workerPid);
  const clientBefore = clientCpuSeconds();
  const began = performance.now();
  const latencies = await Promise.all(ids.map((id) => converseAs(context, shape, id, perThread)));
  const seconds = (performance.now() - began) / 1000;
  const clientAfter = clientCpuSeconds();
  const serverAfter = await treeCpuSeconds(context.serverPid);
  const workerAfter = await treeCpuSeconds(context.workerPid);
  const loadAfter = await loadAverage();
  const turns = threads * perThread;
  const records: TurnRecord[] = [];
  for (const [index, id] of ids.entries()) {
    const handle = context.client.workflow.getHandle(id);
    await handle.signal(floorCloseSignal);
    await handle.result();
    const recorded = floorTurns((await handle.fetchHistory()).events ?? []);
    if (recorded.length !== perThread) throw new Error(`${id}: ${recorded.length} turns in its history`);
    for (const [turn, record] of recorded.entries())
      records.push({ ...record, thread: id, clientMs: latencies[index]![turn]! });
  }
  const perTurn = (before: number, after: number) => ((after - before) * 1000) / turns;
  return {
    shape: shape.name,
    phase: kind,
    round,
    threads,
    turns,
    seconds,
    cpuMsPerTurn: {
      server: perTurn(serverBefore, serverAfter),
      worker: perTurn(workerBefore, workerAfter),
      client: perTurn(clientBefore, clientAfter),
    },
    loadBefore,
    loadAfter,
    records,
  };
}

/** One line per shape and phase; CPU as the median (min–max) of the rounds, times over all turns. */
function summary(shapes: Shape[], results: PhaseResult[]): string {
  const headers = [
    'shape, phase',
    'events / turn (Keel)',
    'CPU ms / turn: server + worker',
    'dev server',
    'worker',
    'client',
    'execution p50 / p95, ms',
    'update accepted → completed p50, ms',
    'client latency p50 / p95, ms',
    'turns/s',
    'load average',
  ];
  const lines: string[][] = [];
  for (const shape of shapes) {
    for (const kind of ['sequential', 'concurrent'] as const) {
      const runs = results.filter((result) => result.shape === shape.name && result.phase === kind);
      if (runs.length === 0) continue;
      const { threads, turns } = runs[0]!;
      const all = runs.flatMap((run) => run.records);
      // A thread's first turn also starts its workflow: its events are counted apart.
      const events = spread(all.filter((record) => !record.first).map((record) => record.events));
      const cpu = (pick: (run: PhaseResult) => number) => showSpread(spread(runs.map(pick)));
      const ms = (values: number[]) =>
        `${percentile(values, 0.5).toFixed(0)} / ${percentile(values, 0.95).toFixed(0)}`;
      const loads = runs.flatMap((run) => [run.loadBefore, run.loadAfter]);
      lines.push([
        `${shape.name}, ${kind === 'sequential' ? `1 thread × ${turns}` : `${threads} threads × ${turns / threads}`}`,
        `${events.min === events.max ? events.median : showSpread(events, 0)} (${shape.keelEvents ?? '—'})`,
        cpu((run) => run.cpuMsPerTurn.server + run.cpuMsPerTurn.worker),
        cpu((run) => run.cpuMsPerTurn.server),
        cpu((run) => run.cpuMsPerTurn.worker),
        cpu((run) => run.cpuMsPerTurn.client),
        ms(all.map((record) => record.executionMs)),
        percentile(
          all.map((record) => record.updateMs),
          0.5,
        ).toFixed(0),
        ms(all.map((record) => record.clientMs)),
        cpu((run) => run.turns / run.seconds),
        `${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`,
      ]);
    }
  }
  return markdownTable(headers, lines);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '3' },
      turns: { type: 'string', default: '50' },
      threads: { type: 'string', default: '20' },
      'per-thread': { type: 'string', default: '5' },
      shapes: { type: 'string', default: allShapes.map((shape) => shape.name).join(',') },
      'payload-kib': { type: 'string', default: '0' },
      tuning: { type: 'string', default: 'keel' },
    },
  });
  const rounds = Number(values.rounds);
  const sequentialTurns = Number(values.turns);
  const threads = Number(values.threads);
  const perThread = Number(values['per-thread']);
  const payloadKib = Number(values['payload-kib']);
  const shapes = values.shapes.split(',').map((name) => {
    const shape = allShapes.find((candidate) => candidate.name === name);
    if (shape === undefined) throw new Error(`unknown shape ${name}`);
    return shape;
  });
  // Random bytes do not compress, as Keel's encrypted payloads do not; 0 KiB: a few bytes.
  const payload =
    payloadKib > 0 ? randomBytes(Math.ceil((payloadKib * 1024 * 3) / 4)).toString('base64') : 'x';
  const note = (line: string) => process.stderr.write(`  ${line}\n`);

  const config = parseConfig({ PATH: process.env.PATH, HOME: process.env.HOME }, process.cwd());
  const cliPath = await ensureTemporalCli(config, note);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'keel-floor-turns-'));
  const [port, uiPort] = [await freePort(), await freePort()];
  const server = await startDevServer({
    cliPath,
    dataDir,
    port,
    uiPort,
    namespace: 'default',
    // As bench/harness.ts: Keel's dynamic config, then any of the caller's.
    extraArgs: (process.env.KEEL_BENCH_DEV_SERVER_ARGS ?? '').split(' ').filter((arg) => arg !== ''),
  });
  const taskQueue = `floor-turns-${randomUUID()}`;
  const worker = await spawnNode(
    'floor worker',
    'bench/floor/worker.ts',
    [server.address, taskQueue, values.tuning],
    {},
    /floor worker ready/,
  );
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const context: Context = {
    client,
    taskQueue,
    serverPid: server.process.pid!,
    workerPid: worker.pid,
    payload,
  };
  const results: PhaseResult[] = [];
  const idle = { serverMsPerS: 0, workerMsPerS: 0 };
  try {
    note('warming up: 10 turns of each shape');
    for (const shape of shapes) await converseAs(context, shape, `floor-warm-${randomUUID()}`, 10);
    // What the server and worker burn doing nothing, to read the per-turn figures against.
    const idleSeconds = 5;
    const [serverIdle, workerIdle] = [
      await treeCpuSeconds(context.serverPid),
      await treeCpuSeconds(worker.pid),
    ];
    await sleep(idleSeconds * 1000);
    Object.assign(idle, {
      serverMsPerS: ((await treeCpuSeconds(context.serverPid)) - serverIdle) * (1000 / idleSeconds),
      workerMsPerS: ((await treeCpuSeconds(worker.pid)) - workerIdle) * (1000 / idleSeconds),
    });
    for (let round = 1; round <= rounds; round++) {
      for (const shape of shapes) {
        note(`round ${round}/${rounds}, ${shape.name}: 1 thread × ${sequentialTurns}`);
        results.push(await phase(context, shape, 'sequential', round, 1, sequentialTurns));
        note(`round ${round}/${rounds}, ${shape.name}: ${threads} threads × ${perThread}`);
        results.push(await phase(context, shape, 'concurrent', round, threads, perThread));
      }
    }
  } finally {
    await worker.stop();
    await connection.close();
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
  }

  process.stdout.write(
    `Temporal's floor per tool turn (model, tool, model; no-op activities, ${payloadKib > 0 ? `${payloadKib} KiB` : 'tiny'} payloads), ` +
      `${values.tuning === 'keel' ? "Keel's" : "the SDK's"} worker tuning, ${rounds} round(s)\n` +
      `idle: dev server ${idle.serverMsPerS.toFixed(1)} ms CPU per s, worker ${idle.workerMsPerS.toFixed(1)} ms per s\n\n`,
  );
  process.stdout.write(`${summary(shapes, results)}\n`);
  for (const shape of shapes) process.stdout.write(`- ${shape.name}: ${shape.what}\n`);
  const resultsDir = path.join(__dirname, '..', 'results');
  await mkdir(resultsDir, { recursive: true });
  const file = path.join(
    resultsDir,
    `floor-turn-cost-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
  );
  // Each turn as one row of `turn_columns`, so a run's file stays small.
  const rounded = (value: number) => Math.round(value * 10) / 10;
  const phases = results.map(({ records, ...rest }) => ({
    ...rest,
    turns_recorded: records.map((record) => [
      record.first ? 1 : 0,
      record.events,
      rounded(record.executionMs),
      rounded(record.updateMs),
      rounded(record.clientMs),
    ]),
  }));
  await writeFile(
    file,
    `${JSON.stringify({
      command: process.argv.slice(2),
      options: { rounds, sequentialTurns, threads, perThread, payloadKib, tuning: values.tuning },
      machine: {
        cores: os.cpus().length,
        cpu_model: os.cpus()[0]?.model ?? 'unknown',
        node: process.version,
      },
      idle,
      turn_columns: ['first', 'events', 'execution_ms', 'update_ms', 'client_ms'],
      phases,
    })}\n`,
  );
  process.stdout.write(`\nraw figures: ${path.relative(process.cwd(), file)}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
