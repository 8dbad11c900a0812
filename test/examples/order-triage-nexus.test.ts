/**
 * The order-triage example calling Keel's Nexus service from a namespace of its own: the
 * operation runs an agent on Keel's worker and returns its typed result; cancelling the caller
 * cancels the agent's run; the calling workflow's quota admits the agent, or refuses it before it
 * starts (decision 0480).
 */
import { randomUUID } from 'node:crypto';
import Long from 'long';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  Client,
  WithStartWorkflowOperation,
  WorkflowFailedError,
  type WorkflowHandle,
} from '@temporalio/client';
import { ApplicationFailure, NexusOperationFailure } from '@temporalio/common';
import { agentServiceName } from '../../common/agent-service';
import * as messages from '../../common/messages';
import { admitRunUpdate, callerQuotaWorkflowId, settleRunSignal } from '../../common/quota';
import { workflowIdFor } from '../../common/thread';
import { findTranscriptViolation } from '../../common/transcript';
import type {
  TriageByNexusInput,
  TriageChatInput,
  TriageOrderOutcome,
} from '../../examples/order-triage/workflows';
import { testDataConverter } from '../helpers/encryption';
import { agentThreadOfOperation, runOrderTriageWorker } from '../helpers/order-triage';
import { closedDescription, eventually } from '../helpers/temporal';
import { workerHarness } from '../helpers/worker-harness';

jest.setTimeout(180_000);

// Each caller may have one agent under way: every test's caller starts one.
const quota = { concurrent_runs: 1 };
const keel = workerHarness(() => ({ KEEL_QUOTA_CONCURRENT_RUNS: String(quota.concurrent_runs) }));
const suffix = randomUUID().slice(0, 8);
const ordersNamespace = `orders-${suffix}`;
const endpoint = `keel-agents-${suffix}`;
const exampleQueue = `order-triage-${suffix}`;
let orders: Client;
let example: { stop: () => Promise<void> };

beforeAll(async () => {
  const { workflowService, operatorService } = keel.client.connection;
  await workflowService.registerNamespace({
    namespace: ordersNamespace,
    workflowExecutionRetentionPeriod: { seconds: Long.fromNumber(24 * 3600) },
  });
  await operatorService.createNexusEndpoint({
    spec: {
      name: endpoint,
      target: { worker: { namespace: keel.config.temporal.namespace, taskQueue: keel.config.taskQueue } },
    },
  });
  orders = new Client({
    connection: keel.client.connection,
    namespace: ordersNamespace,
    dataConverter: testDataConverter(),
  });
  example = await runOrderTriageWorker({ namespace: ordersNamespace, taskQueue: exampleQueue });
});

afterAll(() => example.stop());

type Triage = WorkflowHandle<(input: TriageByNexusInput) => Promise<TriageOrderOutcome>>;

function triageChat(
  chat: TriageChatInput['chat'],
): Promise<WorkflowHandle<(input: TriageChatInput) => Promise<TriageOrderOutcome>>> {
  const orderId = `order-${randomUUID().slice(0, 8)}`;
  return orders.workflow.start('triageChatWorkflow', {
    workflowId: `triage-chat-${orderId}`,
    taskQueue: exampleQueue,
    args: [{ order_id: orderId, model: 'scripted:demo', endpoint, chat }],
  });
}

/** The ApplicationFailure under the NexusOperationFailure a failed caller's run ends with. */
async function operationFailureOf(run: WorkflowHandle): Promise<ApplicationFailure> {
  const failure = await run.result().catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  const operation = (failure as WorkflowFailedError).cause;
  expect(operation).toBeInstanceOf(NexusOperationFailure);
  let cause: unknown = operation;
  while (cause instanceof Error && !(cause instanceof ApplicationFailure)) cause = cause.cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  return cause as ApplicationFailure;
}

function triage(complaint: string, orderId = `order-${randomUUID().slice(0, 8)}`): Promise<Triage> {
  return orders.workflow.start('triageOrderByNexusWorkflow', {
    workflowId: `triage-${orderId}`,
    taskQueue: exampleQueue,
    args: [{ order_id: orderId, complaint, model: 'scripted:demo', endpoint }],
  });
}

describe(`an order-triage workflow in its own namespace calling ${agentServiceName} through Nexus`, () => {
  it('gets the agent’s typed answer after a tool call', async () => {
    const run = await triage(`Broken lid.\nrun: echo '{"priority":"normal","team":"returns"}'`);
    const outcome = await run.result();
    expect(outcome.agent.status).toBe('completed');
    expect(outcome.agent.output).toEqual({ priority: 'normal', team: 'returns' });
    expect(outcome.agent.usage.output_tokens).toBeGreaterThan(0);
    const transcript = await keel.client.workflow
      .getHandle(workflowIdFor(outcome.agent.thread_id))
      .query(messages.getTranscriptQuery, {});
    expect(findTranscriptViolation(transcript)).toBeUndefined();
    expect(transcript.some((message) => message.content.some((block) => block.type === 'tool_use'))).toBe(
      true,
    );
  });

  it('cancels the agent’s run when the caller is cancelled, and the caller gets a result with status cancelled (no throw)', async () => {
    const run = await triage(`Cancel me.\nthink: 60\nrun: echo never`);
    const threadId = await agentThreadOfOperation(keel.client);
    const agent = keel.client.workflow.getHandle(workflowIdFor(threadId));
    await eventually(async () => {
      const run = await agent.query(messages.getRunQuery, { run_id: 'task' });
      return run?.status === 'running' ? true : undefined;
    });
    await sleep(500);
    await run.cancel();
    const closed = await closedDescription(agent, 'the agent to close');
    expect(closed.status.name).toBe('COMPLETED');
    const task = await agent.query(messages.getRunQuery, { run_id: 'task' });
    expect(task?.status).toBe('cancelled');
    // The operation answers with the agent's result, as for any other end: the caller's code goes
    // on (docs/guide/other-workflows.md).
    const outcome = await run.result();
    expect(outcome.agent).toMatchObject({ status: 'cancelled', status_reason: 'thread_closed' });
  });

  it('starts the agent from a chat so far, through the same operation', async () => {
    const run = await triageChat([
      { role: 'user', content: 'Where is my parcel?' },
      { role: 'assistant', content: 'It left the warehouse on Monday.' },
      {
        role: 'user',
        content: `Still not here.\nrun: echo '{"priority":"normal","team":"shipping"}'`,
      },
    ]);
    const outcome = await run.result();
    expect(outcome.agent).toMatchObject({
      status: 'completed',
      output: { priority: 'normal', team: 'shipping' },
    });
    const transcript = await keel.client.workflow
      .getHandle(workflowIdFor(outcome.agent.thread_id))
      .query(messages.getTranscriptQuery, {});
    expect(transcript.slice(0, 3).map(({ role, run_id }) => `${role}:${run_id}`)).toEqual([
      'user:earlier',
      'assistant:earlier',
      'user:task',
    ]);
    expect(findTranscriptViolation(transcript)).toBeUndefined();
  });

  it("fails the operation with ConcurrencyLimit, before any agent starts, when the calling workflow's quota has no room", async () => {
    const orderId = `order-${randomUUID().slice(0, 8)}`;
    // The ledger of the workflow that calls the operation, as the request's link names it.
    const ledger = callerQuotaWorkflowId(`nexus:${ordersNamespace}/triage-${orderId}`);
    const key = `elsewhere/${randomUUID()}`;
    await keel.client.workflow.executeUpdateWithStart(admitRunUpdate, {
      args: [{ key, limits: quota }],
      startWorkflowOperation: new WithStartWorkflowOperation('quotaWorkflow', {
        workflowId: ledger,
        taskQueue: keel.config.taskQueue,
        args: [{}],
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    });
    const run = await triage('Broken lid.', orderId);
    const cause = await operationFailureOf(run).finally(() =>
      keel.client.workflow.getHandle(ledger).signal(settleRunSignal, { key, billed_usd: 0 }),
    );
    expect(cause.type).toBe('ConcurrencyLimit');
    expect(cause.message).toMatch(/1 runs are under way/);
  });

  it('fails the operation with AgentConfigInvalid for a chat of a bad shape', async () => {
    const run = await triageChat([{ role: 'assistant', content: 'Hi!' }]);
    const cause = await operationFailureOf(run);
    expect(cause.type).toBe('AgentConfigInvalid');
    expect(cause.message).toMatch(/messages\[0\] must be a user message/);
  });
});
