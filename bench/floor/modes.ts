/**
 * Where the floor's two modes (~33 ms vs ~100 ms per no-op activity) come from: the floor
 * workflow run `rounds` times with 3 activities on a fresh dev server and floor worker, once per
 * server setting below, printing for each run the server-timed ms per activity and the median
 * schedule-to-start of its workflow tasks and of its activity tasks (history timestamps).
 *
 * The switch is the history service's transfer queue reader: it takes one token from a rate
 * limiter (`history.transferProcessorMaxPollRPS`, 20 a second per shard, a burst of 20; the dev
 * server has one shard) before each read of new tasks, and every workflow or activity task
 * reaches matching through such a read. The first ~20 reads after a pause go at once; after that
 * each waits for the next token, ~50 ms apart, less the time since the last one. A pause refills
 * the bucket (a restarted worker only looked like a cure because of the pause it took).
 *
 *   npx tsx bench/floor/modes.ts [rounds]
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { parseConfig } from '../../platform/config';
import { startDevServer } from '../../launch/dev-server';
import { ensureTemporalCli } from '../../launch/temporal-cli';
import { spawnNode } from '../harness';
import { at } from '../history-spans';
import { spread } from '../stats';

const EventType = temporal.api.enums.v1.EventType;

/** Temporal's own defaults for what Keel's servers set (decision 0260), so the first variant is Temporal's. */
const temporalDefaults = [
  '--dynamic-config-value',
  'history.transferProcessorMaxPollRPS=20',
  '--dynamic-config-value',
  'system.enableActivityEagerExecution=false',
];

const variants: Array<{ name: string; args: string[] }> = [
  { name: "Temporal's defaults", args: temporalDefaults },
  {
    name: "Temporal's defaults, one task queue partition",
    args: [
      ...temporalDefaults,
      '--dynamic-config-value',
      'matching.numTaskqueueReadPartitions=1',
      '--dynamic-config-value',
      'matching.numTaskqueueWritePartitions=1',
    ],
  },
  {
    name: 'transfer queue reads not rate limited (history.transferProcessorMaxPollRPS=10000)',
    args: [...temporalDefaults, '--dynamic-config-value', 'history.transferProcessorMaxPollRPS=10000'],
  },
  { name: "Keel's settings (decision 0260: 1000 reads a second, eager activities)", args: [] },
];

/** Milliseconds from each `scheduled` event to the `started` event that follows it. */
function scheduleToStart(
  events: temporal.api.history.v1.IHistoryEvent[],
  scheduled: temporal.api.enums.v1.EventType,
  started: temporal.api.enums.v1.EventType,
): number[] {
  const spans: number[] = [];
  for (const [index, event] of events.entries()) {
    if (event.eventType !== scheduled) continue;
    const next = events.slice(index + 1).find((later) => later.eventType === started);
    if (next !== undefined) spans.push(at(next) - at(event));
  }
  return spans;
}

async function main(): Promise<void> {
  const rounds = Number(process.argv[2] ?? 12);
  const config = parseConfig({ PATH: process.env.PATH, HOME: process.env.HOME }, process.cwd());
  const cliPath = await ensureTemporalCli(config, (line) => process.stderr.write(`${line}\n`));
  for (const variant of variants) {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'keel-floor-modes-'));
    const port = 18_233 + Math.floor(Math.random() * 1000);
    const server = await startDevServer({
      cliPath,
      dataDir,
      port,
      uiPort: port + 1000,
      namespace: 'default',
      extraArgs: variant.args,
    });
    const queue = `floor-${randomUUID()}`;
    const worker = await spawnNode(
      'floor worker',
      'bench/floor/worker.ts',
      [server.address, queue],
      {},
      /ready/,
    );
    const connection = await Connection.connect({ address: server.address });
    const client = new Client({ connection });
    process.stdout.write(
      `${variant.name}: ms per activity, schedule-to-start of workflow / activity tasks\n`,
    );
    try {
      for (let round = 0; round < rounds; round++) {
        const workflowId = `floor-${randomUUID()}`;
        await client.workflow.execute('floorWorkflow', { taskQueue: queue, workflowId, args: [3] });
        const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
        const span = at(events.at(-1)!) - at(events[0]!);
        const workflowTasks = scheduleToStart(
          events,
          EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
          EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
        );
        const activityTasks = scheduleToStart(
          events,
          EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
          EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED,
        );
        process.stdout.write(
          `  run ${String(round).padStart(2)}: ${(span / 3).toFixed(0).padStart(4)} ms, ` +
            `${spread(workflowTasks).median.toFixed(0)} / ${spread(activityTasks).median.toFixed(0)} ms\n`,
        );
      }
    } finally {
      await worker.stop();
      await connection.close();
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
