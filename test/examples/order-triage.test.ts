/**
 * The example of examples/order-triage: a workflow on its own task queue starts a Keel agent as
 * a child, through the public `keel/workflow` module, and awaits its typed result.
 */
import { randomUUID } from 'node:crypto';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { assistantWorkflowIdFor, type NewAssistant } from '../../common/assistants';
import * as messages from '../../common/messages';
import { workflowIdFor } from '../../common/thread';
import { findTranscriptViolation } from '../../common/transcript';
import { createOrderTriageWorker } from '../../examples/order-triage/worker';
import {
  addNoteSignal,
  agentThreadQuery,
  decideSignal,
  type TriageOrderInput,
  type TriageOrderOutcome,
} from '../../examples/order-triage/workflows';
import { eventually, testAddress } from '../helpers/temporal';
import { testDataConverter } from '../helpers/encryption';
import { workerHarness } from '../helpers/worker-harness';

jest.setTimeout(180_000);

const keel = workerHarness();
const exampleQueue = `order-triage-${randomUUID()}`;
let connection: NativeConnection;
let exampleWorker: Worker;
let exampleRunning: Promise<void>;

beforeAll(async () => {
  connection = await NativeConnection.connect({ address: testAddress() });
  exampleWorker = await createOrderTriageWorker({
    connection,
    taskQueue: exampleQueue,
    dataConverter: testDataConverter(),
  });
  exampleRunning = exampleWorker.run();
});

afterAll(async () => {
  exampleWorker.shutdown();
  await exampleRunning;
  await connection.close();
});

function triage(complaint: string, workflow = 'triageOrderWorkflow', extra: Partial<TriageOrderInput> = {}) {
  const input: TriageOrderInput = {
    order_id: `order-${randomUUID().slice(0, 8)}`,
    complaint,
    // With an assistant, the model is the assistant's.
    ...(extra.assistant_id === undefined ? { model: 'scripted:demo' } : {}),
    keel_task_queue: keel.config.taskQueue,
    ...extra,
  };
  return keel.client.workflow.start<(input: TriageOrderInput) => Promise<TriageOrderOutcome>>(workflow, {
    workflowId: `triage-${input.order_id}`,
    taskQueue: exampleQueue,
    args: [input],
  });
}

describe('an order-triage workflow that starts a Keel agent', () => {
  it('gets the agent’s typed answer after a tool call', async () => {
    const run = await triage(
      `The parcel arrived broken.\nrun: echo '{"priority":"urgent","team":"returns"}'`,
    );
    const outcome = await run.result();
    expect(outcome.agent.status).toBe('completed');
    expect(outcome.agent.output).toEqual({ priority: 'urgent', team: 'returns' });
    expect(outcome.route).toBe('returns:urgent');
    expect(outcome.agent.usage.output_tokens).toBeGreaterThan(0);
    expect(outcome.agent.runs).toBe(1);
    // The agent is an ordinary thread: its transcript holds the tool call and its result.
    const thread = keel.client.workflow.getHandle(workflowIdFor(outcome.agent.thread_id));
    const description = await thread.describe();
    expect(description.status.name).toBe('COMPLETED');
    expect(description.parentExecution?.workflowId).toBe(run.workflowId);
  });

  it('answers with a typed error when the agent’s answer fails the schema', async () => {
    const run = await triage(`Where is my order?\nrun: echo '{"priority":"whenever","team":"support"}'`);
    const outcome = await run.result();
    expect(outcome.agent.status).toBe('failed');
    expect(outcome.agent.error?.type).toBe('StructuredOutputInvalid');
    expect(outcome.agent.error?.message).toMatch(/priority/);
    expect(outcome.agent.answer).toContain('whenever');
    expect(outcome.route).toBe('human-review');
  });

  it('fails the start with AgentConfigInvalid for a model Keel does not know', async () => {
    const input: TriageOrderInput = {
      order_id: 'bad-config',
      complaint: 'anything',
      model: 'gpt5-somewhere',
      keel_task_queue: keel.config.taskQueue,
    };
    const run = await keel.client.workflow.start('triageOrderWorkflow', {
      workflowId: `triage-bad-${randomUUID()}`,
      taskQueue: exampleQueue,
      args: [input],
    });
    const failure = await run.result().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const cause = (failure as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe('AgentConfigInvalid');
    expect(cause?.message).toMatch(/unknown model provider/);
  });
});

describe('an agent configured by an assistant', () => {
  const failureOf = async (input: Partial<TriageOrderInput>) => {
    const run = await keel.client.workflow.start('triageOrderWorkflow', {
      workflowId: `triage-assistant-${randomUUID()}`,
      taskQueue: exampleQueue,
      args: [{ order_id: 'a', complaint: 'anything', keel_task_queue: keel.config.taskQueue, ...input }],
    });
    const failure = await run.result().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    return (failure as WorkflowFailedError).cause as ApplicationFailure;
  };

  it('takes the assistant’s settings, read from its workflow', async () => {
    const assistantId = `triage-${randomUUID().slice(0, 8)}`;
    const now = new Date().toISOString();
    const assistant: NewAssistant = {
      assistant_id: assistantId,
      first: {
        assistant_id: assistantId,
        graph_id: 'agent',
        version: 1,
        name: 'triage',
        description: null,
        config: { configurable: { model: 'scripted:demo', max_steps: 4 } },
        context: {},
        metadata: {},
        created_at: now,
      },
    };
    await keel.client.workflow.start('assistantWorkflow', {
      workflowId: assistantWorkflowIdFor(assistantId),
      taskQueue: keel.config.taskQueue,
      args: [assistant],
    });
    const run = await triage(
      `Late.\nrun: echo '{"priority":"low","team":"shipping"}'`,
      'triageOrderWorkflow',
      {
        model: undefined as never,
        assistant_id: assistantId,
      },
    );
    const outcome = await run.result();
    expect(outcome.agent.output).toEqual({ priority: 'low', team: 'shipping' });
    const thread = await keel.client.workflow
      .getHandle(workflowIdFor(outcome.agent.thread_id))
      .query(messages.getThreadQuery);
    expect(thread.config.model).toBe('scripted:demo');
    // The caller's own setting wins over the assistant's.
    expect(thread.config.max_steps).toBe(5);
    expect(thread.metadata.assistant_id).toBe(assistantId);
  });

  it('fails the start with AssistantNotFound for an unknown assistant', async () => {
    const cause = await failureOf({ assistant_id: `missing-${randomUUID().slice(0, 8)}` });
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect(cause.type).toBe('AssistantNotFound');
  });
});

describe('a triage workflow holding its agent’s handle', () => {
  it('hands a follow-up message to the agent, whose last answer is the result', async () => {
    const run = await triage('Order late.\nthink: 2', 'triageOrderWithHandleWorkflow');
    await eventually(async () => (await run.query(agentThreadQuery)) ?? undefined, 30_000, 'the agent');
    await run.signal(addNoteSignal, { text: `It is a gift.\nrun: echo '{"priority":"low","team":"gifts"}'` });
    const outcome = await run.result();
    expect(outcome.agent.status).toBe('completed');
    expect(outcome.agent.runs).toBe(2);
    expect(outcome.agent.output).toEqual({ priority: 'low', team: 'gifts' });
  });

  it('passes a decision on the agent’s pending approval on, as the API would for any thread', async () => {
    const run = await triage(
      `Charged twice.\nrun: echo '{"priority":"urgent","team":"billing"}'`,
      'triageOrderWithHandleWorkflow',
      { approval: 'require' },
    );
    const threadId = await eventually(async () => (await run.query(agentThreadQuery)) ?? undefined);
    const agent = keel.client.workflow.getHandle(workflowIdFor(threadId));
    const [pending] = await eventually(async () => {
      const approvals = await agent.query(messages.getPendingApprovalsQuery);
      return approvals.length > 0 ? approvals : undefined;
    }, 30_000);
    expect(pending?.tool).toBe('bash');
    await run.signal(decideSignal, { approval_id: pending!.approval_id, approve: true });
    const outcome = await run.result();
    expect(outcome.agent.output).toEqual({ priority: 'urgent', team: 'billing' });
    const transcript = await agent.query(messages.getTranscriptQuery, {});
    expect(findTranscriptViolation(transcript)).toBeUndefined();
  });

  it('keeps its agent across a continue-as-new and gets the result by signal', async () => {
    const run = await triage(
      `Wrong size.\nthink: 1\nrun: echo '{"priority":"normal","team":"returns"}'`,
      'triageWithHandOverWorkflow',
    );
    const outcome = await run.result();
    expect(outcome.agent.status).toBe('completed');
    expect(outcome.agent.output).toEqual({ priority: 'normal', team: 'returns' });
    const first = await keel.client.workflow.getHandle(run.workflowId, run.firstExecutionRunId).describe();
    expect(first.status.name).toBe('CONTINUED_AS_NEW');
  });
});
