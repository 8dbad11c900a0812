/**
 * The example of examples/order-triage: a workflow on its own task queue starts a Keel agent as
 * a child, through the public `keel/workflow` module, and awaits its typed result.
 */
import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { assistantWorkflowIdFor, type NewAssistant } from '../../common/assistants';
import * as messages from '../../common/messages';
import { searchAttributes } from '../../common/search-attributes';
import { workflowIdFor } from '../../common/thread';
import { findTranscriptViolation } from '../../common/transcript';
import type { AgentMessage } from '../../workflows/agents';
import {
  addNoteSignal,
  agentThreadQuery,
  decideSignal,
  type TriageChatInput,
  type TriageOrderInput,
  type TriageOrderOutcome,
  type TriageWithLateNoteInput,
  type TriageWithLateNoteOutcome,
  withdrawSignal,
} from '../../examples/order-triage/workflows';
import { eventually } from '../helpers/temporal';
import { runOrderTriageWorker } from '../helpers/order-triage';
import { outlineHistory } from '../helpers/history';
import { workerHarness } from '../helpers/worker-harness';

jest.setTimeout(180_000);

const keel = workerHarness();
const exampleQueue = `order-triage-${randomUUID()}`;
let example: { stop: () => Promise<void> };

beforeAll(async () => {
  example = await runOrderTriageWorker({ taskQueue: exampleQueue });
});

afterAll(() => example.stop());

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

describe('an agent’s history, as an operator reads it in the Temporal Web UI', () => {
  it('holds 29 events for a task with one tool call: two patch markers, and visibility written as it starts and as it closes', async () => {
    const run = await triage(`Box dented.\nrun: echo '{"priority":"low","team":"returns"}'`);
    const outcome = await run.result();
    expect(outcome.agent.status).toBe('completed');
    const agent = keel.client.workflow.getHandle(workflowIdFor(outcome.agent.thread_id));
    const history = outlineHistory((await agent.fetchHistory()).events ?? []);
    const visibility = 'visibility KeelCostUsd KeelModel KeelRunStatuses KeelStatus KeelTurns';
    expect(history.outline).toEqual([
      'workflow_execution_started',
      'task',
      // One marker stands for every patch (decision 0220); Temporal's core upserts its name.
      'patch keel-tracing-per-worker',
      'visibility TemporalChangeVersion',
      // The one patch since, asked by the first streamed model call (decision 0370).
      'patch keel-stop-keeps-partial',
      'visibility TemporalChangeVersion',
      'schedule callModel',
      visibility, // busy, one run
      'activity_task_started',
      'activity_task_completed',
      'task',
      'schedule runTool',
      'activity_task_started',
      'activity_task_completed',
      'task',
      'schedule callModel',
      'activity_task_started',
      'activity_task_completed',
      'task',
      visibility, // closed, not idle first
      'workflow_execution_completed',
    ]);
    // 21 events of its own and 2 more per workflow task (scheduled, started), unless a task had
    // to be retried on a loaded machine.
    expect(history.events - history.retried).toBe(29);
    const attributes = (await agent.describe()).typedSearchAttributes;
    expect(attributes.get(searchAttributes.status)).toBe('closed');
    expect(attributes.get(searchAttributes.turns)).toBe(1);
    expect(attributes.get(searchAttributes.costUsd)).toBe(outcome.agent.usage.cost_usd);
    expect(attributes.get(searchAttributes.runStatuses) ?? []).toEqual([]);
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

  it('says cancelled when cancel() follows send(text): result() is the cancelled message, not the earlier answer', async () => {
    const run = await triage('Order late.\nthink: 2', 'triageOrderWithHandleWorkflow');
    const threadId = await eventually(async () => (await run.query(agentThreadQuery)) ?? undefined);
    await run.signal(addNoteSignal, { text: 'It is a gift.\nthink: 60' });
    const agent = keel.client.workflow.getHandle(workflowIdFor(threadId));
    // The follow-up is under way (the first answer is in): now the order is withdrawn.
    await eventually(async () => {
      const thread = await agent.query(messages.getThreadQuery);
      return thread.active_run_id?.startsWith('message-') === true ? true : undefined;
    }, 30_000);
    await run.signal(withdrawSignal);
    const outcome = await run.result();
    expect(outcome.agent.status).toBe('cancelled');
    expect(outcome.agent.status_reason).toBe('thread_closed');
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
    // A denial of an approval the agent does not have is ignored (signals reach it in order, so
    // it comes first): the real approval still lets the command run.
    await run.signal(decideSignal, { approval_id: `${pending!.approval_id}-unknown`, approve: false });
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

/** A customer's chat with the shop's bot, which looked up the parcel with a tool. */
const chat: AgentMessage[] = [
  { role: 'user', content: 'My order has not arrived.' },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Let me check the tracking.' },
      { type: 'tool_use', id: 'toolu_track', name: 'bash', input: { command: 'track 7' } },
    ],
  },
  {
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'toolu_track', content: 'in transit since Monday' }],
  },
  { role: 'assistant', content: 'It has been in transit since Monday.' },
];

function triageChat(input: Partial<TriageChatInput> & Pick<TriageChatInput, 'chat'>) {
  const order_id = `order-${randomUUID().slice(0, 8)}`;
  return keel.client.workflow.start<(input: TriageChatInput) => Promise<TriageOrderOutcome>>(
    'triageChatWorkflow',
    {
      workflowId: `triage-chat-${order_id}`,
      taskQueue: exampleQueue,
      args: [{ order_id, model: 'scripted:demo', keel_task_queue: keel.config.taskQueue, ...input }],
    },
  );
}

describe('an agent started from a conversation so far', () => {
  it('starts from the earlier messages and answers the last after a tool call', async () => {
    const last = `It is a gift for tomorrow.\nrun: echo '{"priority":"urgent","team":"shipping"}'`;
    const run = await triageChat({ chat: [...chat, { role: 'user', content: last }] });
    const outcome = await run.result();
    expect(outcome.agent.status).toBe('completed');
    expect(outcome.agent.output).toEqual({ priority: 'urgent', team: 'shipping' });
    expect(outcome.agent.runs).toBe(1);
    const transcript = await keel.client.workflow
      .getHandle(workflowIdFor(outcome.agent.thread_id))
      .query(messages.getTranscriptQuery, {});
    expect(findTranscriptViolation(transcript)).toBeUndefined();
    // The chat is the transcript's start, marked as earlier than any run; the task run follows it.
    expect(transcript.slice(0, 4).map(({ role, run_id }) => ({ role, run_id }))).toEqual([
      { role: 'user', run_id: 'earlier' },
      { role: 'assistant', run_id: 'earlier' },
      { role: 'user', run_id: 'earlier' },
      { role: 'assistant', run_id: 'earlier' },
    ]);
    expect(transcript[1]?.content).toEqual(chat[1]?.content);
    expect(transcript[4]).toMatchObject({
      role: 'user',
      run_id: 'task',
      content: [{ type: 'text', text: last }],
    });
    expect(
      transcript.slice(5).some((message) => message.content.some((block) => block.type === 'tool_use')),
    ).toBe(true);
  });

  it.each<[string, AgentMessage[], RegExp]>([
    ['a chat that ends with the bot', chat, /last of messages must be a user message/],
    [
      'a tool call left unanswered',
      [chat[0]!, chat[1]!, { role: 'user', content: 'hello?' }],
      /tool_use without tool_result: toolu_track/,
    ],
  ])('fails the start with AgentConfigInvalid for %s', async (_, given, message) => {
    const run = await triageChat({ chat: given });
    const failure = await run.result().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const cause = (failure as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe('AgentConfigInvalid');
    expect(cause?.message).toMatch(message);
  });
});

describe('a note for an agent that has closed', () => {
  it('is refused with AgentClosed, as are a late decision and a cancel, and starts a new agent from the conversation', async () => {
    const input: TriageWithLateNoteInput = {
      order_id: `order-${randomUUID().slice(0, 8)}`,
      complaint: `Scratched screen.\nrun: echo '{"priority":"normal","team":"returns"}'`,
      note: `It is also cracked.\nrun: echo '{"priority":"urgent","team":"returns"}'`,
      model: 'scripted:demo',
      keel_task_queue: keel.config.taskQueue,
    };
    const run = await keel.client.workflow.start<
      (input: TriageWithLateNoteInput) => Promise<TriageWithLateNoteOutcome>
    >('triageWithLateNoteWorkflow', {
      workflowId: `triage-late-${input.order_id}`,
      taskQueue: exampleQueue,
      args: [input],
    });
    const outcome = await run.result();
    expect(outcome.first).toMatchObject({
      status: 'completed',
      output: { priority: 'normal', team: 'returns' },
    });
    expect(outcome.refused).toEqual([
      {
        type: 'AgentClosed',
        message: expect.stringMatching(/cannot send a message to agent .*: it has closed/),
      },
      {
        type: 'AgentClosed',
        message: expect.stringMatching(/cannot decide an approval of agent .*: it has closed/),
      },
      { type: 'AgentClosed', message: expect.stringMatching(/cannot cancel agent .*: it has closed/) },
    ]);
    expect(outcome.again).toMatchObject({
      status: 'completed',
      output: { priority: 'urgent', team: 'returns' },
    });
    const first = await keel.client.workflow.getHandle(workflowIdFor(outcome.first.thread_id)).describe();
    expect(first.status.name).toBe('COMPLETED');
    const transcript = await keel.client.workflow
      .getHandle(workflowIdFor(outcome.again.thread_id))
      .query(messages.getTranscriptQuery, {});
    expect(transcript[1]).toMatchObject({ role: 'assistant', run_id: 'earlier' });
    expect(transcript[1]?.content).toEqual([{ type: 'text', text: outcome.first.answer }]);
  });
});
