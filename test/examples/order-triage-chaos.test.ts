/**
 * The order-triage example against real `keel worker` processes: the agent survives its worker's
 * SIGKILL mid-step, and cancelling the triage workflow cancels its agent.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { KeelConfig } from '../../platform/config';
import * as messages from '../../common/messages';
import { workflowIdFor } from '../../common/thread';
import { findTranscriptViolation } from '../../common/transcript';
import {
  agentThreadQuery,
  type TriageByNexusInput,
  type TriageOrderInput,
  type TriageOrderOutcome,
} from '../../examples/order-triage/workflows';
import { WorkerFleet, type WorkerProcess } from '../helpers/worker-process';
import { agentThreadOfOperation, runOrderTriageWorker } from '../helpers/order-triage';
import { closeTestClient, closedDescription, eventually, testClient, testConfig } from '../helpers/temporal';

jest.setTimeout(240_000);

let client: Client;
let config: KeelConfig;
let fleet: WorkerFleet;
let example: { stop: () => Promise<void> };
const exampleQueue = `order-triage-${randomUUID()}`;
const endpoint = `keel-agents-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  client = await testClient();
  config = await testConfig();
  fleet = new WorkerFleet(() => ({
    KEEL_TASK_QUEUE: config.taskQueue,
    KEEL_DATA_DIR: config.dataDir,
    KEEL_MODEL: 'scripted:demo',
  }));
  await client.connection.operatorService.createNexusEndpoint({
    spec: {
      name: endpoint,
      target: { worker: { namespace: config.temporal.namespace, taskQueue: config.taskQueue } },
    },
  });
  example = await runOrderTriageWorker({ taskQueue: exampleQueue });
});

afterEach(() => fleet.stopAll());

afterAll(async () => {
  await example.stop();
  await closeTestClient();
});

type Triage = WorkflowHandle<(input: TriageOrderInput) => Promise<TriageOrderOutcome>>;

async function startTriage(complaint: string): Promise<{ triage: Triage; threadId: string }> {
  const orderId = `order-${randomUUID().slice(0, 8)}`;
  const triage: Triage = await client.workflow.start('triageOrderWithHandleWorkflow', {
    workflowId: `triage-${orderId}`,
    taskQueue: exampleQueue,
    args: [{ order_id: orderId, complaint, model: 'scripted:demo', keel_task_queue: config.taskQueue }],
  });
  const threadId = await eventually(
    async () => (await triage.query(agentThreadQuery)) ?? undefined,
    60_000,
    'the agent’s thread id',
  );
  return { triage, threadId };
}

const agentHandle = (threadId: string) => client.workflow.getHandle(workflowIdFor(threadId));

/**
 * Kills `worker` (SIGKILL, as a dead machine stops) once the agent's first model call is under
 * way, and starts another in its place.
 */
async function killMidStep(worker: WorkerProcess, threadId: string): Promise<void> {
  await modelCallUnderway(threadId);
  await sleep(500);
  worker.kill('SIGKILL');
  await worker.exited;
  await fleet.start();
}

/** Waits until the agent's task run is in its model call. */
async function modelCallUnderway(threadId: string): Promise<void> {
  await eventually(
    async () => {
      const dump = await agentHandle(threadId).query(messages.getStateQuery);
      const active = dump.state.active as { step: { kind: string } } | null;
      return active?.step.kind === 'model' && dump.in_flight_activities > 0 ? true : undefined;
    },
    60_000,
    'the agent’s first model call',
  );
}

describe('an order-triage agent on a real Keel worker process', () => {
  it('finishes with its typed answer when its worker is killed mid-step', async () => {
    const first = await fleet.start();
    const { triage, threadId } = await startTriage(
      `The parcel is late.\nthink: 4\nrun: echo '{"priority":"normal","team":"shipping"}'`,
    );
    await killMidStep(first, threadId);
    const outcome = await triage.result();
    expect(outcome.agent.status).toBe('completed');
    expect(outcome.agent.output).toEqual({ priority: 'normal', team: 'shipping' });
    const transcript = await agentHandle(threadId).query(messages.getTranscriptQuery, {});
    expect(findTranscriptViolation(transcript)).toBeUndefined();
    const toolUses = transcript.flatMap((message) =>
      message.role === 'assistant' ? message.content.filter((block) => block.type === 'tool_use') : [],
    );
    expect(toolUses).toHaveLength(1);
  });

  it('finishes the Nexus operation with the typed answer when the agent’s worker is killed mid-step', async () => {
    const first = await fleet.start();
    const orderId = `order-${randomUUID().slice(0, 8)}`;
    const triage = await client.workflow.start<(input: TriageByNexusInput) => Promise<TriageOrderOutcome>>(
      'triageOrderByNexusWorkflow',
      {
        workflowId: `triage-${orderId}`,
        taskQueue: exampleQueue,
        args: [
          {
            order_id: orderId,
            complaint: `Missing item.\nthink: 4\nrun: echo '{"priority":"urgent","team":"warehouse"}'`,
            model: 'scripted:demo',
            endpoint,
          },
        ],
      },
    );
    const threadId = await agentThreadOfOperation(client);
    await killMidStep(first, threadId);
    const outcome = await triage.result();
    expect(outcome.agent.status).toBe('completed');
    expect(outcome.agent.output).toEqual({ priority: 'urgent', team: 'warehouse' });
  });

  it('cancels the agent’s run when the triage workflow is cancelled, and runAgent throws the cancellation (the workflow ends cancelled)', async () => {
    await fleet.start();
    const { triage, threadId } = await startTriage(`Cancel me.\nthink: 60\nrun: echo never`);
    await modelCallUnderway(threadId);
    await triage.cancel();
    const agent = await closedDescription(agentHandle(threadId), 'the agent to close');
    expect(agent.status.name).toBe('COMPLETED');
    const run = await agentHandle(threadId).query(messages.getRunQuery, { run_id: 'task' });
    expect(run?.status).toBe('cancelled');
    expect(run?.status_reason).toBe('thread_closed');
    const transcript = await agentHandle(threadId).query(messages.getTranscriptQuery, {});
    expect(findTranscriptViolation(transcript)).toBeUndefined();
    const parent = await closedDescription(triage, 'the triage workflow to close');
    // The caller's own cancellation stays one: runAgent throws it, as Temporal's calls do.
    expect(parent.status.name).toBe('CANCELLED');
  });
});
