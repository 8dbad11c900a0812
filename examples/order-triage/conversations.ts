/**
 * Agents that start from a conversation instead of a task: a customer's chat with the shop's
 * support bot handed over as it stands, and a note that comes after the agent closed.
 */
import { ApplicationFailure, createNexusServiceClient } from '@temporalio/workflow';
import {
  AgentFailureType,
  runAgent,
  startAgent,
  type AgentInput,
  type AgentMessage,
  type AgentResult,
} from 'keel/workflow';
import { agentService } from 'keel/agent-service';
import { triageSchema, type Triage, type TriageOrderInput, type TriageOrderOutcome } from './triage';

const system =
  'You triage customer complaints for an online shop. Answer with the priority and the team as JSON.';

const routeOf = (agent: AgentResult<Triage>): string =>
  agent.output === undefined ? 'human-review' : `${agent.output.team}:${agent.output.priority}`;

export interface TriageChatInput {
  order_id: string;
  /** The chat so far, oldest first: customer and bot alternating, ending with the customer. */
  chat: AgentMessage[];
  model?: string;
  keel_task_queue?: string;
  /** Run the agent through Keel's Nexus service at this endpoint instead of as a child. */
  endpoint?: string;
}

/** The agent reads the whole chat (the bot's tool calls included) and triages its last message. */
export async function triageChatWorkflow(input: TriageChatInput): Promise<TriageOrderOutcome> {
  const request: AgentInput = {
    messages: input.chat,
    config: { ...(input.model === undefined ? {} : { model: input.model }), system, max_steps: 5 },
    output_schema: triageSchema,
    metadata: { order_id: input.order_id },
  };
  const agent =
    input.endpoint === undefined
      ? await runAgent<Triage>({
          ...request,
          ...(input.keel_task_queue === undefined ? {} : { task_queue: input.keel_task_queue }),
        })
      : ((await createNexusServiceClient({
          service: agentService,
          endpoint: input.endpoint,
        }).executeOperation('runAgent', request, {
          scheduleToCloseTimeout: '1 hour',
        })) as AgentResult<Triage>);
  return { order_id: input.order_id, route: routeOf(agent), agent };
}

export interface TriageWithLateNoteInput extends TriageOrderInput {
  /** More from the customer, arriving once the first agent is done. */
  note: string;
}

export interface TriageWithLateNoteOutcome {
  first: AgentResult<Triage>;
  /** What `send`, `decideApproval` and `cancel` threw at the closed agent: `AgentClosed`. */
  refused: Array<{ type: string; message: string }>;
  /** The agent started again from the conversation so far, the note last. */
  again: AgentResult<Triage>;
}

async function refusal(attempt: Promise<unknown>): Promise<{ type: string; message: string }> {
  try {
    await attempt;
  } catch (error) {
    if (error instanceof ApplicationFailure && error.type === AgentFailureType.agentClosed)
      return { type: error.type, message: error.message };
    throw error;
  }
  return { type: 'none', message: 'the closed agent took it' };
}

/**
 * An agent closes once its task is done: a late note (or a late decision on an approval, or a
 * cancel) cannot reach it, and says so with `AgentClosed`. The note goes to a new agent that starts from the
 * conversation so far.
 */
export async function triageWithLateNoteWorkflow(
  input: TriageWithLateNoteInput,
): Promise<TriageWithLateNoteOutcome> {
  const task = `Triage the complaint about order ${input.order_id}.\n${input.complaint}`;
  const settings = {
    config: { ...(input.model === undefined ? {} : { model: input.model }), system },
    output_schema: triageSchema,
    ...(input.keel_task_queue === undefined ? {} : { task_queue: input.keel_task_queue }),
  };
  const agent = await startAgent<Triage>({ task, ...settings });
  const first = await agent.result();
  const refused = [
    await refusal(agent.send(input.note)),
    await refusal(agent.decideApproval({ approval_id: 'late', decision: 'approve' })),
    await refusal(agent.cancel()),
  ];
  const again = await runAgent<Triage>({
    messages: [
      { role: 'user', content: task },
      { role: 'assistant', content: first.answer ?? '(no answer)' },
      { role: 'user', content: input.note },
    ],
    ...settings,
  });
  return { first, refused, again };
}
