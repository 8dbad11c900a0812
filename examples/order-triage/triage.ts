/** What the order-triage workflows share: the agent's answer, its schema, their input and outcome. */
import type { AgentResult } from 'keel/workflow';

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
  /** `provider:model` for the agent, e.g. `anthropic:claude-sonnet-4-5`; or the assistant's. */
  model?: string;
  /** An assistant made through Keel's API that configures the agent. */
  assistant_id?: string;
  /** Keel's task queue. @default 'keel' */
  keel_task_queue?: string;
  /** `require`: a human (or this workflow) approves the agent's commands. @default 'auto' */
  approval?: 'auto' | 'require';
}

export interface TriageOrderOutcome {
  order_id: string;
  /** Where the order goes: the agent's triage, or a person when the agent could not decide. */
  route: string;
  agent: AgentResult<Triage>;
}
