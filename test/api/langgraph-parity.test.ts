/**
 * LangGraph parity, through LangGraph's own JS SDK: graph inputs other than `{messages}`, a run
 * with neither input nor command, bare model names in `config.configurable.model`, and paging
 * of assistants with limit/offset (decision 0381).
 */
import { Client } from '@langchain/langgraph-sdk';
import { apiHarness, call, failureOf } from '../helpers/api';

jest.setTimeout(120_000);

describe('LangGraph parity through its JS SDK', () => {
  const harness = apiHarness();
  let client: Client;
  beforeAll(() => {
    client = new Client({ apiUrl: harness.base });
  });

  const typesOf = (values: unknown): string[] =>
    ((values as { messages: Array<{ type: string }> }).messages ?? []).map((message) => message.type);

  it('takes a graph input without messages and ends the run at once, the thread as it was', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: [{ type: 'human', content: 'hi' }] },
    });
    const before = await client.threads.getState(thread.thread_id);
    const values = await client.runs.wait(thread.thread_id, 'agent', { input: { message: 'hi' } });
    expect(typesOf(values)).toEqual(['human', 'ai']);
    const [latest] = await client.runs.list(thread.thread_id, { limit: 1 });
    expect(latest?.status).toBe('completed');
    expect((await client.threads.getState(thread.thread_id)).values).toEqual(before.values);
  });

  it('takes a run with neither input nor command, as a run from the current state', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'agent');
    const joined = await client.runs.join(thread.thread_id, run.run_id);
    expect(typesOf(joined)).toEqual([]);
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe('completed');
  });

  it('takes messages as one string, as add_messages does, and ignores keys outside the state', async () => {
    const thread = await client.threads.create();
    const values = await client.runs.wait(thread.thread_id, 'agent', {
      input: { messages: 'hello as a string', topic: 'ignored' },
    });
    expect(typesOf(values)).toEqual(['human', 'ai']);
    const state = await client.threads.getState<{ messages: Array<{ content: unknown }> }>(thread.thread_id);
    expect(state.values.messages[0]?.content).toBe('hello as a string');
  });

  it('still refuses a blank message with 422 naming it', async () => {
    const thread = await client.threads.create();
    const failure = await failureOf(
      client.runs.wait(thread.thread_id, 'agent', { input: { messages: [{ type: 'human', content: ' ' }] } }),
    );
    expect(failure).toMatchObject({ status: 422, body: { error: { param: 'input.messages.0.content' } } });
  });

  it('infers the provider of a bare model name in config.configurable.model where it is unambiguous', async () => {
    const claude = await client.assistants.create({
      graphId: 'agent',
      config: { configurable: { model: 'claude-sonnet-4-5' } },
    });
    expect(claude.config.configurable?.model).toBe('anthropic:claude-sonnet-4-5');
    const gpt = await client.assistants.create({
      graphId: 'agent',
      config: { configurable: { model: 'gpt-4o' } },
    });
    expect(gpt.config.configurable?.model).toBe('openai:gpt-4o');
    const thread = await call<{ config: { model: string } }>(harness.base, 'POST', '/threads', {
      config: { model: 'o3-mini' },
    });
    expect(thread.body.config.model).toBe('openai:o3-mini');
    // An Ollama or vLLM name could be either provider: it must say which.
    const ambiguous = await failureOf(
      client.assistants.create({ graphId: 'agent', config: { configurable: { model: 'llama3.2' } } }),
    );
    expect(ambiguous.status).toBe(422);
  });

  it('pages assistants with limit and offset: every one once, in the order of one listing', async () => {
    const name = `paged-${Date.now()}`;
    for (let index = 0; index < 5; index++)
      await client.assistants.create({ graphId: 'agent', name, metadata: { name } });
    const all = await client.assistants.search({ metadata: { name }, limit: 100 });
    expect(all).toHaveLength(5);
    const paged = [];
    for (let offset = 0; offset < 5; offset += 2)
      paged.push(...(await client.assistants.search({ metadata: { name }, limit: 2, offset })));
    expect(paged.map((assistant) => assistant.assistant_id)).toEqual(
      all.map((assistant) => assistant.assistant_id),
    );
    const byName = await client.assistants.search({
      metadata: { name },
      limit: 5,
      sortBy: 'assistant_id',
      sortOrder: 'asc',
    });
    expect(byName.map((assistant) => assistant.assistant_id)).toEqual(
      all.map((assistant) => assistant.assistant_id).sort(),
    );
  });
});
