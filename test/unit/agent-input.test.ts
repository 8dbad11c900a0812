/** The checks `startAgent` makes before anything starts, and the structured-output check after. */
import type { AgentInput } from '../../common/agents';
import { zeroUsage } from '../../common/usage';
import { agentInputProblem, threadConfigOf } from '../../workflows/agents/agent-input';
import { agentResult } from '../../workflows/agents/start-agent';

const schema = {
  type: 'object',
  properties: { priority: { enum: ['low', 'urgent'] } },
  required: ['priority'],
};
const valid: AgentInput = { task: 'triage this', config: { model: 'scripted:demo' } };

describe('an agent input', () => {
  it.each<[string, Partial<AgentInput>, RegExp]>([
    ['an empty task', { task: '  ' }, /task is empty/],
    ['no model', { config: {} }, /config.model is required/],
    ['an unknown provider', { config: { model: 'gpt5' } }, /unknown model provider "gpt5"/],
    ['a negative budget', { config: { model: 'scripted:demo', max_cost_usd: -1 } }, /max_cost_usd/],
    [
      'an unknown tool rule',
      { config: { model: 'scripted:demo', tool_rules: { bash: 'maybe' as never } } },
      /tool_rules.bash/,
    ],
    ['a schema zod cannot read', { output_schema: { type: 'no-such-type' } }, /output_schema/],
  ])('is refused with %s', (_, change, message) => {
    expect(agentInputProblem({ ...valid, ...change })).toMatch(message);
  });

  it('is accepted with a model and a readable schema', () => {
    expect(agentInputProblem({ ...valid, output_schema: schema })).toBeUndefined();
  });

  it('tells the agent the schema in its system prompt, after the caller’s own', () => {
    const config = threadConfigOf({
      ...valid,
      config: { model: 'scripted:demo', system: 'Be brief.' },
      output_schema: schema,
    });
    expect(config.system).toMatch(/^Be brief\.\n\n.*JSON Schema:\n\{"type":"object"/s);
    expect(config).toMatchObject({ approval: 'auto', approval_timeout_s: 300, max_steps: 50 });
  });
});

describe('an agent’s result', () => {
  const finished = (output: string) => ({
    thread_id: 't',
    status: 'completed' as const,
    output,
    usage: zeroUsage,
    runs: 1,
  });

  it('holds the JSON of the last fenced block that satisfies the schema', () => {
    const answer = 'Here:\n```json\n{"priority":"low"}\n```\nthen\n```\n{"priority":"urgent"}\n```';
    expect(agentResult(finished(answer), schema)).toMatchObject({
      status: 'completed',
      output: { priority: 'urgent' },
    });
  });

  it('takes a whole answer that is JSON', () => {
    expect(agentResult(finished('{"priority":"low"}'), schema).output).toEqual({ priority: 'low' });
  });

  it.each([
    [
      'JSON the schema refuses',
      '```json\n{"priority":"whenever"}\n```',
      /does not satisfy output_schema[\s\S]*priority/,
    ],
    ['no JSON at all', 'I think it is urgent.', /answered without JSON/],
  ])('fails StructuredOutputInvalid on %s, keeping the answer', (_, answer, message) => {
    const result = agentResult(finished(answer), schema);
    expect(result.status).toBe('failed');
    expect(result.error?.type).toBe('StructuredOutputInvalid');
    expect(result.error?.message).toMatch(message);
    expect(result.answer).toBe(answer);
  });

  it('passes a failed run through with its own error', () => {
    const result = agentResult(
      {
        thread_id: 't',
        status: 'failed',
        status_reason: 'budget_exceeded',
        error: { type: 'BudgetExceeded', message: 'over' },
        usage: zeroUsage,
        runs: 1,
      },
      schema,
    );
    expect(result).toMatchObject({
      status: 'failed',
      status_reason: 'budget_exceeded',
      error: { type: 'BudgetExceeded' },
    });
  });
});
