/**
 * From a caller's `AgentInput` to the conversation the agent runs as, checked first: a bad input
 * fails the start with `AgentConfigInvalid` instead of starting an agent that cannot work.
 */
import { ApprovalMode, ToolRule, type ThreadConfig } from '../../common/thread';
import type { AgentConfig, AgentInput } from '../../common/agents';
import { parseModelSpec } from '../../common/model-spec';
import type { NewConversation } from '../interpreter/conversation-input';
import { promptOf } from './agent-prompt';
import { outputInstruction, schemaFor } from './structured-output';

/** The defaults `AgentConfig` documents (the same as a thread's). */
const defaults = { approval: ApprovalMode.auto, approval_timeout_s: 300, max_steps: 50 } as const;

const positive = (value: number | undefined): boolean =>
  value === undefined || (Number.isFinite(value) && value > 0);

function configProblem(config: AgentConfig | undefined): string | undefined {
  if (config === undefined || typeof config.model !== 'string')
    return 'config.model is required (or an assistant_id whose assistant names a model)';
  const spec = parseModelSpec(config.model);
  if (typeof spec === 'string') return `config.model: ${spec}`;
  if (config.approval !== undefined && !Object.values(ApprovalMode).includes(config.approval))
    return `config.approval must be one of ${Object.values(ApprovalMode).join(', ')}`;
  for (const key of ['approval_timeout_s', 'max_tokens', 'max_cost_usd', 'max_steps'] as const)
    if (!positive(config[key])) return `config.${key} must be a positive number`;
  for (const [tool, rule] of Object.entries(config.tool_rules ?? {}))
    if (!Object.values(ToolRule).includes(rule))
      return `config.tool_rules.${tool} must be one of ${Object.values(ToolRule).join(', ')}`;
  return undefined;
}

/** Why the input cannot start an agent, or undefined when it can. */
export function agentInputProblem(input: AgentInput): string | undefined {
  const prompt = promptOf(input);
  if (typeof prompt === 'string') return prompt;
  const problem = configProblem(input.config);
  if (problem !== undefined) return problem;
  if (input.output_schema !== undefined) {
    const schema = schemaFor(input.output_schema);
    if (typeof schema === 'string') return schema;
  }
  return undefined;
}

/** The thread's configuration: defaults filled in, the output instruction added to the prompt. */
export function threadConfigOf(input: AgentInput): ThreadConfig {
  const config = input.config ?? {};
  const instruction = input.output_schema === undefined ? undefined : outputInstruction(input.output_schema);
  const system = [config.system, instruction].filter((part) => part !== undefined).join('\n\n');
  return {
    // agentInputProblem made sure there is one.
    model: config.model ?? '',
    approval: config.approval ?? defaults.approval,
    approval_timeout_s: config.approval_timeout_s ?? defaults.approval_timeout_s,
    max_steps: config.max_steps ?? defaults.max_steps,
    ...(system === '' ? {} : { system }),
    ...(config.tool_rules === undefined ? {} : { tool_rules: config.tool_rules }),
    ...(config.max_tokens === undefined ? {} : { max_tokens: config.max_tokens }),
    ...(config.max_cost_usd === undefined ? {} : { max_cost_usd: config.max_cost_usd }),
  };
}

/** The conversation's start input; `now` and the thread id come from the workflow API. */
export function conversationFor(
  input: AgentInput,
  threadId: string,
  parentWorkflowId: string,
  now: number,
): NewConversation {
  const createdAt = new Date(now).toISOString();
  const prompt = promptOf(input);
  // agentInputProblem made sure the prompt is sound.
  const { earlier, first } = typeof prompt === 'string' ? { earlier: [], first: [] } : prompt;
  return {
    thread_id: threadId,
    ...(input.owner === undefined ? {} : { owner: input.owner }),
    metadata: {
      ...input.metadata,
      keel_started_by: parentWorkflowId,
      ...(input.assistant_id === undefined ? {} : { assistant_id: input.assistant_id }),
    },
    config: threadConfigOf(input),
    created_at: createdAt,
    task: {
      input: {
        run_id: 'task',
        assistant_id: input.assistant_id ?? 'agent',
        content: first,
        multitask_strategy: 'enqueue',
        metadata: {},
      },
      ...(earlier.length === 0 ? {} : { earlier }),
      ...(input.report_to === undefined ? {} : { report_to: input.report_to }),
    },
  };
}
