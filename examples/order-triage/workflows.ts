/**
 * An order-triage workflow of another codebase: it asks a Keel agent to triage a customer's
 * complaint and waits for a typed answer. It runs on its own task queue; the agent runs on Keel's.
 */
import {
  allHandlersFinished,
  condition,
  createNexusServiceClient,
  continueAsNew,
  defineQuery,
  defineSignal,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import {
  agentFinishedSignal,
  agentResult,
  runAgent,
  startAgent,
  type AgentFinished,
  type AgentResult,
} from 'keel/workflow';
import { agentService } from 'keel/agent-service';
import { triageSchema, type Triage, type TriageOrderInput, type TriageOrderOutcome } from './triage';

export * from './triage';
export * from './conversations';

const task = (input: TriageOrderInput): string =>
  `Triage the complaint about order ${input.order_id}: decide its priority and the team that handles it.\n${input.complaint}`;

/** Starts the agent and awaits its result in one call. */
export async function triageOrderWorkflow(input: TriageOrderInput): Promise<TriageOrderOutcome> {
  const agent = await runAgent<Triage>({
    task: task(input),
    config: {
      ...(input.model === undefined ? {} : { model: input.model }),
      system: 'You triage customer complaints for an online shop.',
      max_steps: 5,
    },
    ...(input.assistant_id === undefined ? {} : { assistant_id: input.assistant_id }),
    output_schema: triageSchema,
    metadata: { order_id: input.order_id },
    ...(input.keel_task_queue === undefined ? {} : { task_queue: input.keel_task_queue }),
  });
  const route = agent.output === undefined ? 'human-review' : `${agent.output.team}:${agent.output.priority}`;
  return { order_id: input.order_id, route, agent };
}

/** The agent's thread id, so a test (or an operator) can find the agent of a running triage. */
export const agentThreadQuery = defineQuery<string | null>('agentThread');
/** More from the customer: handed to the agent as a follow-up message. */
export const addNoteSignal = defineSignal<[{ text: string }]>('addNote');
/** A staff member's decision on a command the agent wants to run, passed on to the agent. */
export const decideSignal = defineSignal<[{ approval_id: string; approve: boolean }]>('decide');
/** The order was withdrawn: the agent is cancelled, and its result says so. */
export const withdrawSignal = defineSignal('withdraw');

/** The same with a handle: starts the agent, exposes its thread, then awaits it. */
export async function triageOrderWithHandleWorkflow(input: TriageOrderInput): Promise<TriageOrderOutcome> {
  let threadId: string | null = null;
  setHandler(agentThreadQuery, () => threadId);
  const handle = await startAgent<Triage>({
    task: task(input),
    config: {
      ...(input.model === undefined ? {} : { model: input.model }),
      ...(input.approval === undefined ? {} : { approval: input.approval }),
    },
    output_schema: triageSchema,
    ...(input.keel_task_queue === undefined ? {} : { task_queue: input.keel_task_queue }),
  });
  threadId = handle.threadId;
  setHandler(addNoteSignal, async ({ text }) => {
    await handle.send(text);
  });
  setHandler(decideSignal, async ({ approval_id, approve }) => {
    await handle.decideApproval({ approval_id, decision: approve ? 'approve' : 'deny' });
  });
  setHandler(withdrawSignal, async () => {
    await handle.cancel('the customer withdrew the order');
  });
  const agent = await handle.result();
  await condition(allHandlersFinished);
  const route = agent.output === undefined ? 'human-review' : `${agent.output.team}:${agent.output.priority}`;
  return { order_id: input.order_id, route, agent };
}

export interface TriageWithHandOverInput extends TriageOrderInput {
  /** Set by this workflow when it continues as new: the agent it started before. */
  thread_id?: string;
  finished?: AgentFinished;
}

/**
 * A parent that continues as new while its agent works: the agent is started with the `abandon`
 * policy (a continue-as-new closes the parent's run, which would otherwise cancel it) and reports
 * to this workflow's id with `agentFinished`, which reaches whichever run is current.
 */
export async function triageWithHandOverWorkflow(
  input: TriageWithHandOverInput,
): Promise<TriageOrderOutcome> {
  let finished = input.finished;
  setHandler(agentFinishedSignal, (report) => {
    finished = report;
  });
  if (input.thread_id === undefined) {
    const agent = await startAgent({
      task: task(input),
      config: { ...(input.model === undefined ? {} : { model: input.model }) },
      output_schema: triageSchema,
      parent_close_policy: 'abandon',
      report_to: workflowInfo().workflowId,
      ...(input.keel_task_queue === undefined ? {} : { task_queue: input.keel_task_queue }),
    });
    await condition(allHandlersFinished);
    return continueAsNew<typeof triageWithHandOverWorkflow>({
      ...input,
      thread_id: agent.threadId,
      ...(finished === undefined ? {} : { finished }),
    });
  }
  await condition(() => finished !== undefined);
  const agent = agentResult<Triage>(finished!, triageSchema);
  const route = agent.output === undefined ? 'human-review' : `${agent.output.team}:${agent.output.priority}`;
  return { order_id: input.order_id, route, agent };
}

export interface TriageByNexusInput extends TriageOrderInput {
  /** The Nexus endpoint that targets Keel's task queue (`temporal operator nexus endpoint create`). */
  endpoint: string;
}

/**
 * The same triage through Keel's Nexus service: this workflow may live in another namespace and
 * knows only the endpoint's name. Cancelling it cancels the operation, and so the agent's run.
 */
export async function triageOrderByNexusWorkflow(input: TriageByNexusInput): Promise<TriageOrderOutcome> {
  const agents = createNexusServiceClient({ service: agentService, endpoint: input.endpoint });
  const agent = (await agents.executeOperation(
    'runAgent',
    {
      task: task(input),
      config: { ...(input.model === undefined ? {} : { model: input.model }) },
      output_schema: triageSchema,
      metadata: { order_id: input.order_id },
    },
    { scheduleToCloseTimeout: '1 hour' },
  )) as AgentResult<Triage>;
  const route = agent.output === undefined ? 'human-review' : `${agent.output.team}:${agent.output.priority}`;
  return { order_id: input.order_id, route, agent };
}
