/**
 * The floor conversation of bench/floor/turn-cost.ts (no figures): driven as Keel's API drives a
 * thread, each turn answers with what it was given, and its history reader finds every turn with
 * the events Keel's tool turn writes (25, and 15 with local model calls) or the bare floor's.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { floorActivities } from '../../bench/floor/activities';
import { floorCloseSignal } from '../../bench/floor/conversation';
import { converse, floorTurns } from '../../bench/floor/turns';
import { testAddress } from '../helpers/temporal';

jest.setTimeout(180_000);

describe("the floor conversation's turns", () => {
  const taskQueue = `floor-turns-${randomUUID()}`;
  let worker: Worker;
  let running: Promise<void>;
  let workerConnection: NativeConnection;
  let client: Client;

  beforeAll(async () => {
    workerConnection = await NativeConnection.connect({ address: testAddress() });
    worker = await Worker.create({
      connection: workerConnection,
      taskQueue,
      workflowsPath: path.join(__dirname, '../../bench/floor/workflows.ts'),
      activities: floorActivities,
    });
    running = worker.run();
    client = new Client({ connection: await Connection.connect({ address: testAddress() }) });
  }, 180_000);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await workerConnection?.close();
    await client?.connection.close();
  });

  it.each([
    { localModelCalls: false, searchAttributes: true, events: 25 },
    { localModelCalls: true, searchAttributes: true, events: 15 },
    { localModelCalls: false, searchAttributes: false, events: 23 },
    { localModelCalls: true, searchAttributes: false, events: 13 },
  ])(
    'local model calls $localModelCalls, search attributes $searchAttributes: $events events a turn',
    async ({ events, ...options }) => {
      const workflowId = `floor-turns-${randomUUID()}`;
      const latencies = await converse(client, taskQueue, options, workflowId, 3, 'a payload');
      expect(latencies).toHaveLength(3);

      const handle = client.workflow.getHandle(workflowId);
      await handle.signal(floorCloseSignal);
      expect(await handle.result()).toBe(3);
      const history = (await handle.fetchHistory()).events ?? [];
      const turns = floorTurns(history);

      expect(turns.map((turn) => turn.first)).toEqual([true, false, false]);
      expect(turns.slice(1).map((turn) => turn.events)).toEqual([events, events]);
      // The first turn also holds the workflow's start, and the turns hold the whole history but
      // the closing signal's workflow task and the workflow's end.
      expect(turns[0]!.events).toBe(events + 1);
      expect(history.length - turns.reduce((sum, turn) => sum + turn.events, 0)).toBe(5);
      for (const turn of turns) {
        expect(turn.executionMs).toBeGreaterThan(0);
        expect(turn.updateMs).toBeGreaterThanOrEqual(0);
        expect(turn.updateMs).toBeLessThanOrEqual(turn.executionMs);
      }
    },
  );
});
