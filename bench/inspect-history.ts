/**
 * Where a step's time goes, from the server's history: the floor workflow run 8 times each with
 * 1 and 3 no-op activities on a fresh floor worker (client and server time of each), then a
 * Keel thread's first turn (which starts its workflow), a plain turn and a tool turn, event by
 * event with its time and size, then an agent that another workflow started (`agentWorkflow`, as
 * the Nexus operation starts it) doing a task with one tool call: its whole history. Patch markers
 * and search-attribute writes are named (decision 0220).
 *
 *   npx tsx bench/inspect-history.ts              # all of it
 *   npx tsx bench/inspect-history.ts --keel-only  # without the floor workflow
 *   npx tsx bench/inspect-history.ts --agent      # only the agent run
 */
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import type { AgentInput, AgentResult } from '../common/agents';
import { workflowIdFor } from '../common/thread';
import { spawnNode, startSystem, type System } from './harness';
import { at, workflowSpan } from './history-spans';
import { expectCompleted, turn } from './turns';

const names = temporal.api.enums.v1.EventType;

function show(events: temporal.api.history.v1.IHistoryEvent[]): void {
  const start = at(events[0]!);
  for (const event of events) {
    const bytes = temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
    const name = (names[event.eventType ?? 0] ?? String(event.eventType)).replace('EVENT_TYPE_', '');
    const update = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name;
    const activity = event.activityTaskScheduledEventAttributes?.activityType?.name;
    const signal = event.workflowExecutionSignaledEventAttributes?.signalName;
    const marker = event.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
    const attributes = event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
    const memo = event.workflowPropertiesModifiedEventAttributes?.upsertedMemo?.fields;
    const detail = update
      ? `update ${update}`
      : activity
        ? `activity ${activity}`
        : signal
          ? `signal ${signal}`
          : marker
            ? `patch ${(JSON.parse(Buffer.from(marker).toString('utf8')) as { id: string }).id}`
            : attributes
              ? Object.keys(attributes).sort().join(' ')
              : memo
                ? `memo ${Object.keys(memo).sort().join(' ')}`
                : '';
    process.stdout.write(
      `${String(event.eventId).padStart(4)} +${(at(event) - start).toFixed(1).padStart(7)} ms ${name.padEnd(40)} ${String(bytes).padStart(7)} B ${detail}\n`,
    );
  }
}

/** An agent started the way the Nexus operation starts one, with one tool call; its history. */
async function agentRun(system: System): Promise<void> {
  const input: AgentInput = { task: 'run: echo inspected', config: { model: 'scripted:demo' } };
  const result = await system.client.workflow.execute<(input: AgentInput) => Promise<AgentResult>>(
    'agentWorkflow',
    { workflowId: `inspect-agent-${randomUUID()}`, taskQueue: system.taskQueue, args: [input] },
  );
  if (result.status !== 'completed') throw new Error(`the agent ended ${result.status}`);
  const events = (await system.client.workflow.getHandle(workflowIdFor(result.thread_id)).fetchHistory())
    .events;
  process.stdout.write(`\nKeel agent run (model, bash, model): ${events?.length ?? 0} events\n`);
  show(events ?? []);
}

async function main(): Promise<void> {
  const system = await startSystem();
  if (process.argv.includes('--agent')) {
    try {
      await agentRun(system);
    } finally {
      await system.stop();
    }
    return;
  }
  const queue = `floor-${randomUUID()}`;
  const floor = await spawnNode(
    'floor worker',
    'bench/floor/worker.ts',
    [system.server.address, queue],
    {},
    /ready/,
  );
  try {
    const floorRounds = process.argv.includes('--keel-only') ? 0 : 8;
    if (floorRounds > 0) process.stdout.write('floor workflow: activities, client ms, server ms\n');
    for (let round = 0; round < floorRounds; round++) {
      for (const activities of [1, 3]) {
        const workflowId = `floor-${randomUUID()}`;
        const started = performance.now();
        await system.floorClient.workflow.execute('floorWorkflow', {
          taskQueue: queue,
          workflowId,
          args: [activities],
        });
        const client = performance.now() - started;
        const server = (await workflowSpan(system.floorClient, workflowId)).ms;
        process.stdout.write(
          `${activities} ${client.toFixed(0).padStart(5)} ${server.toFixed(0).padStart(5)}\n`,
        );
      }
    }
    const thread = `inspect-${randomUUID()}`;
    expectCompleted(await turn(system.apiUrl, thread, 'hello'), 'first turn');
    const handle = system.client.workflow.getHandle(workflowIdFor(thread));
    const firstEvents = (await handle.fetchHistory()).events ?? [];
    const first = firstEvents.length;
    // The first turn also starts the workflow run: what each run writes once shows here.
    process.stdout.write('\nKeel first turn (start, model):\n');
    show(firstEvents);
    expectCompleted(await turn(system.apiUrl, thread, 'hello again'), 'plain turn');
    process.stdout.write('\nKeel plain turn (model):\n');
    show((await handle.fetchHistory()).events?.slice(first) ?? []);
    const before = (await handle.fetchHistory()).events?.length ?? 0;
    expectCompleted(await turn(system.apiUrl, thread, 'run: true'), 'tool turn');
    process.stdout.write('\nKeel tool turn (model, bash, model):\n');
    show((await handle.fetchHistory()).events?.slice(before) ?? []);
    await agentRun(system);
  } finally {
    await floor.stop();
    await system.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
