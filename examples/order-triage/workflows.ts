/**
 * An order-triage workflow of another codebase: it asks a Keel agent to triage a customer's
 * complaint and waits for a typed answer. It runs on its own task queue; the agent runs on Keel's.
 */
import { condition, defineQuery, setHandler } from '@temporalio/workflow';
import { runAgent, startAgent, type AgentResult } from 'keel/workflow';

/** What the agent must answer with (checked against `triageSchema`). */
export interface Triage {
  priority: 'low' | 'normal' | 'urgent';
  team: string;
}

export const triageSchema = {
  type: 'object',
  properties: {
    priority: { type: 'string', enum: ['low', 'normal', 'urgent'] },
    team: { type: 'string', minLength: 1 },
  },
  required: ['priority', 'team'],
};

export interface TriageOrderInput {
  order_id: string;
  complaint: string;
  /** `provider:model` for the agent, e.g. `anthropic:claude-sonnet-4-5`. */
  model: string;
  /** Keel's task queue. @default 'keel' */
  keel_task_queue?: string;
}

export interface TriageOrderOutcome {
  order_id: string;
  /** Where the order goes: the agent's triage, or a person when the agent could not decide. */
  route: string;
  agent: AgentResult<Triage>;
}

const task = (input: TriageOrderInput): string =>
  `Triage the complaint about order ${input.order_id}: decide its priority and the team that handles it.\n${input.complaint}`;

/** Starts the agent and awaits its result in one call. */
export async function triageOrderWorkflow(input: TriageOrderInput): Promise<TriageOrderOutcome> {
  const agent = await runAgent<Triage>({
    task: task(input),
    config: {
      model: input.model,
      system: 'You triage customer complaints for an online shop.',
      max_steps: 5,
    },
    output_schema: triageSchema,
    metadata: { order_id: input.order_id },
    ...(input.keel_task_queue === undefined ? {} : { task_queue: input.keel_task_queue }),
  });
  const route = agent.output === undefined ? 'human-review' : `${agent.output.team}:${agent.output.priority}`;
  return { order_id: input.order_id, route, agent };
}

/** The agent's thread id, so a test (or an operator) can find the agent of a running triage. */
export const agentThreadQuery = defineQuery<string | null>('agentThread');

/** The same with a handle: starts the agent, exposes its thread, then awaits it. */
export async function triageOrderWithHandleWorkflow(input: TriageOrderInput): Promise<TriageOrderOutcome> {
  let threadId: string | null = null;
  setHandler(agentThreadQuery, () => threadId);
  const handle = await startAgent<Triage>({
    task: task(input),
    config: { model: input.model },
    output_schema: triageSchema,
    ...(input.keel_task_queue === undefined ? {} : { task_queue: input.keel_task_queue }),
  });
  threadId = handle.threadId;
  await condition(() => threadId !== null);
  const agent = await handle.result();
  const route = agent.output === undefined ? 'human-review' : `${agent.output.team}:${agent.output.priority}`;
  return { order_id: input.order_id, route, agent };
}
