/** The checks `startAgent` makes before anything starts, and the structured-output check after. */
import type { AgentInput, AgentMessage, AgentOptions } from '../../common/agents';
import { zeroUsage } from '../../common/usage';
import { agentInputProblem, conversationFor, threadConfigOf } from '../../workflows/agents/agent-input';
import { agentResult } from '../../workflows/agents/start-agent';

const schema = {
  type: 'object',
  properties: { priority: { enum: ['low', 'urgent'] } },
  required: ['priority'],
};
const valid: AgentInput = { task: 'triage this', config: { model: 'scripted:demo' } };

describe('an agent input', () => {
  it.each<[string, Partial<AgentOptions> & { task?: AgentInput['task'] }, RegExp]>([
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
    expect(agentInputProblem({ ...valid, ...change } as AgentInput)).toMatch(message);
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

describe('an agent started from earlier messages', () => {
  const config = { model: 'scripted:demo' };
  const asked: AgentMessage = { role: 'user', content: 'What is in the repo?' };
  const toolCall: AgentMessage = {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Let me look.' },
      { type: 'tool_use', id: 'toolu_1', name: 'list_files', input: { path: '.' } },
    ],
  };
  const toolResult: AgentMessage = {
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'README.md' }],
  };
  const answered: AgentMessage = { role: 'assistant', content: 'Only a README.' };
  const next: AgentMessage = { role: 'user', content: 'Summarise it.' };
  const conversation = [asked, toolCall, toolResult, answered, next];

  it('starts with the earlier messages as the transcript and the last as the first run', () => {
    expect(agentInputProblem({ messages: conversation, config })).toBeUndefined();
    const started = conversationFor({ messages: conversation, config }, 't1', 'parent', 0);
    expect(started.task?.input.content).toEqual([{ type: 'text', text: 'Summarise it.' }]);
    expect(started.task?.earlier).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'What is in the repo?' }] },
      toolCall,
      toolResult,
      { role: 'assistant', content: [{ type: 'text', text: 'Only a README.' }] },
    ]);
  });

  it('takes one user message as a task', () => {
    const started = conversationFor({ messages: [next], config }, 't1', 'parent', 0);
    expect(started.task?.earlier).toBeUndefined();
    expect(started.task?.input.content).toEqual([{ type: 'text', text: 'Summarise it.' }]);
  });

  it('keeps only the known fields of each block', () => {
    const noisy = { type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } };
    const started = conversationFor(
      { messages: [{ role: 'user', content: [noisy as never] }], config },
      't1',
      'parent',
      0,
    );
    expect(started.task?.input.content).toEqual([{ type: 'text', text: 'hi' }]);
  });

  it.each<[string, unknown, RegExp]>([
    ['both a task and messages', { task: 'x', messages: [next] }, /either task or messages/],
    ['neither', {}, /task or messages is required/],
    ['no messages at all', { messages: [] }, /non-empty array/],
    ['messages that are not an array', { messages: 'hello' }, /non-empty array/],
    ['an unknown role', { messages: [{ role: 'system', content: 'x' }] }, /messages\[0\]\.role/],
    ['an assistant first', { messages: [answered, next] }, /messages\[0\] must be a user message/],
    ['two user messages in a row', { messages: [asked, next] }, /messages\[1\] must be an? assistant/],
    ['an assistant last', { messages: [asked, answered] }, /last of messages must be a user message/],
    ['a tool result last', { messages: [asked, toolCall, toolResult] }, /last of messages must be text/],
    ['a tool call never answered', { messages: [asked, toolCall, next] }, /tool_use without tool_result/],
    [
      'a tool result for no tool call',
      { messages: [asked, answered, toolResult, answered, next] },
      /tool_result for unknown tool_use/,
    ],
    [
      'a tool call from the user',
      { messages: [{ role: 'user', content: [{ type: 'tool_use', id: 'a', name: 'b', input: {} }] }] },
      /messages\[0\]\.content\[0\]: a user message holds text and tool_result blocks only/,
    ],
    [
      'a block without its fields',
      { messages: [{ role: 'user', content: [{ type: 'text' }] }] },
      /content\[0\]/,
    ],
    [
      'an empty message',
      { messages: [asked, { role: 'assistant', content: ' ' }, next] },
      /messages\[1\] is empty/,
    ],
    [
      'too much to carry',
      { messages: [{ role: 'user', content: 'x'.repeat(250_000) }, answered, next] },
      /at most 200000 characters/,
    ],
  ])('is refused with %s', (_, prompt, message) => {
    expect(agentInputProblem({ ...(prompt as AgentInput), config })).toMatch(message);
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
