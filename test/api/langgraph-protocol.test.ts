/**
 * Contract tests, second slice: assistants, thread and run management, interrupts and crons,
 * driven by LangGraph's own JS SDK (`@langchain/langgraph-sdk`), unmodified, against a real Keel
 * API and worker on the test Temporal server, with the offline scripted model.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@langchain/langgraph-sdk';
import pino from 'pino';
import { startApi } from '../../api/server';
import { apiHarness, call } from '../helpers/api';

jest.setTimeout(120_000);

interface WireMessage {
  type: string;
  id?: string;
  content: unknown;
  tool_calls?: Array<{ name: string; args: Record<string, unknown>; id: string; type: string }>;
  tool_call_id?: string;
}

const human = (content: string) => ({ messages: [{ type: 'human', content }] });
const messagesOf = (values: unknown): WireMessage[] => (values as { messages: WireMessage[] }).messages;
const typesOf = (values: unknown): string[] => messagesOf(values).map((message) => message.type);

/** The HTTP status and Keel error body of a failed SDK call. */
async function failureOf(
  promise: Promise<unknown>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    const { status, text } = error as { status: number; text: string };
    return { status, body: JSON.parse(text) as Record<string, unknown> };
  }
  throw new Error('expected the call to fail');
}

/** Asks until `check` passes (visibility lists a change within moments, not at once). */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (check(value) || Date.now() > deadline) return value;
    await sleep(250);
  }
}

describe("LangGraph's JS SDK against Keel: the rest of the protocol", () => {
  const harness = apiHarness();
  let client: Client;
  beforeAll(() => {
    client = new Client({ apiUrl: harness.base });
  });

  describe('assistants', () => {
    it('creates, versions, finds and deletes an assistant, kept in Temporal across API restarts', async () => {
      const created = await client.assistants.create({
        graphId: 'agent',
        name: 'careful',
        config: { configurable: { system: 'Be brief.', approval: 'require' } },
        metadata: { team: 'contract' },
      });
      expect(created).toMatchObject({
        graph_id: 'agent',
        name: 'careful',
        version: 1,
        config: { configurable: { system: 'Be brief.', approval: 'require' } },
        metadata: { team: 'contract' },
      });
      const id = created.assistant_id;
      expect(await client.assistants.get(id)).toMatchObject({ assistant_id: id, version: 1 });

      const updated = await client.assistants.update(id, {
        name: 'careful v2',
        metadata: { team: 'contract', v: 2 },
      });
      expect(updated).toMatchObject({ version: 2, name: 'careful v2', config: created.config });
      const versions = await client.assistants.getVersions(id);
      expect(versions.map((version) => [version.version, version.name])).toEqual([
        [2, 'careful v2'],
        [1, 'careful'],
      ]);
      expect(await client.assistants.setLatest(id, 1)).toMatchObject({ version: 1, name: 'careful' });
      expect(await client.assistants.get(id)).toMatchObject({ version: 1, name: 'careful' });

      const found = await eventually(
        () => client.assistants.search({ metadata: { team: 'contract' } }),
        (assistants) =>
          assistants.some((assistant) => assistant.assistant_id === id && assistant.version === 1),
      );
      expect(found.map((assistant) => [assistant.assistant_id, assistant.version])).toEqual([[id, 1]]);
      expect(await client.assistants.count({ metadata: { team: 'contract' } })).toBe(1);
      const all = await client.assistants.search({
        graphId: 'agent',
        sortBy: 'assistant_id',
        sortOrder: 'asc',
      });
      expect(all.map((assistant) => assistant.assistant_id)).toEqual(expect.arrayContaining(['agent', id]));

      expect(await client.assistants.getGraph(id)).toMatchObject({
        nodes: expect.any(Array),
        edges: expect.any(Array),
      });
      const schemas = await client.assistants.getSchemas(id);
      expect(schemas).toMatchObject({
        graph_id: 'agent',
        config_schema: { properties: { configurable: expect.any(Object) } },
      });

      // Another API process (a restart) reads the same assistant: it lives in Temporal.
      const again = await startApi({
        client: harness.client,
        config: harness.config,
        logger: pino({ level: 'silent' }),
        host: '127.0.0.1',
        port: 0,
      });
      try {
        const other = new Client({ apiUrl: again.url });
        expect(await other.assistants.get(id)).toMatchObject({
          assistant_id: id,
          version: 1,
          name: 'careful',
        });
      } finally {
        await again.stop();
      }

      await client.assistants.delete(id);
      expect(await failureOf(client.assistants.get(id))).toMatchObject({
        status: 404,
        body: { error: { code: 'assistant_not_found' } },
      });
    });

    it('keeps the default assistant: it cannot be deleted or changed', async () => {
      expect(await failureOf(client.assistants.delete('agent'))).toMatchObject({
        status: 409,
        body: { error: { code: 'default_assistant' } },
      });
      expect(await failureOf(client.assistants.update('agent', { name: 'mine' }))).toMatchObject({
        status: 409,
        body: { error: { code: 'default_assistant' } },
      });
      expect(await client.assistants.get('agent')).toMatchObject({ assistant_id: 'agent', version: 1 });
      expect((await client.assistants.getVersions('agent')).map((version) => version.version)).toEqual([1]);
    });

    it('refuses settings Keel does not have, an unknown graph, and an unknown version', async () => {
      const unknownKey = await failureOf(
        client.assistants.create({ graphId: 'agent', config: { configurable: { temperature: 0.2 } } }),
      );
      expect(unknownKey).toMatchObject({ status: 422, body: { error: { code: 'validation_error' } } });
      expect(await failureOf(client.assistants.create({ graphId: 'other' }))).toMatchObject({
        status: 422,
        body: { error: { code: 'graph_not_found', param: 'graph_id' } },
      });
      const assistant = await client.assistants.create({ graphId: 'agent' });
      expect(await failureOf(client.assistants.setLatest(assistant.assistant_id, 7))).toMatchObject({
        status: 404,
        body: { error: { code: 'version_not_found' } },
      });
      expect(
        await failureOf(client.assistants.create({ graphId: 'agent', assistantId: assistant.assistant_id })),
      ).toMatchObject({
        status: 409,
        body: { error: { code: 'assistant_exists' } },
      });
      expect(
        await client.assistants.create({
          graphId: 'agent',
          assistantId: assistant.assistant_id,
          ifExists: 'do_nothing',
        }),
      ).toMatchObject({ assistant_id: assistant.assistant_id, version: 1 });
    });

    it("configures a run with its assistant's settings: a bare thread run through it follows its tool rules", async () => {
      const strict = await client.assistants.create({
        graphId: 'agent',
        config: { configurable: { tool_rules: { bash: 'deny' } } },
      });
      const thread = await client.threads.create();
      const values = await client.runs.wait(thread.thread_id, strict.assistant_id, {
        input: human('run: echo hi'),
      });
      const tool = messagesOf(values).find((message) => message.type === 'tool')!;
      expect(tool.content).toContain('denied by this thread');
      const [run] = await client.runs.list(thread.thread_id);
      expect(run).toMatchObject({ assistant_id: strict.assistant_id });

      // A run the assistant creates its thread with records it in the thread's metadata.
      const threadId = crypto.randomUUID();
      await client.runs.wait(threadId, strict.assistant_id, { input: human('hello'), ifNotExists: 'create' });
      expect((await client.threads.get(threadId)).metadata).toEqual({
        graph_id: 'agent',
        assistant_id: strict.assistant_id,
      });
    });
  });

  describe('threads', () => {
    it('patches metadata, and a search finds the thread by it', async () => {
      const thread = await client.threads.create({ metadata: { stage: 'draft', keep: 1 } });
      const patched = await client.threads.update(thread.thread_id, { metadata: { stage: 'final' } });
      expect(patched.metadata).toEqual({ graph_id: 'agent', stage: 'final', keep: 1 });
      expect((await client.threads.get(thread.thread_id)).metadata).toEqual(patched.metadata);
      const found = await eventually(
        () => client.threads.search({ metadata: { stage: 'final' } }),
        (threads) => threads.some((candidate) => candidate.thread_id === thread.thread_id),
      );
      expect(found.map((candidate) => candidate.thread_id)).toEqual([thread.thread_id]);
    });

    it('searches by ids and status, sorts, pages and counts', async () => {
      const tag = crypto.randomUUID();
      const ids = ['b', 'a', 'c'].map((letter) => `${letter}-${tag}`);
      for (const threadId of ids) await client.threads.create({ threadId, metadata: { tag } });
      await eventually(
        () => client.threads.count({ metadata: { tag } }),
        (count) => count === 3,
      );
      const sorted = await client.threads.search({ ids, sortBy: 'thread_id', sortOrder: 'asc' });
      expect(sorted.map((thread) => thread.thread_id)).toEqual([...ids].sort());
      const page = await client.threads.search({
        ids,
        sortBy: 'thread_id',
        sortOrder: 'desc',
        limit: 1,
        offset: 1,
      });
      expect(page.map((thread) => thread.thread_id)).toEqual([`b-${tag}`]);
      expect(await client.threads.search({ ids, status: 'busy' })).toEqual([]);
      expect(await client.threads.count({ metadata: { tag }, status: 'idle' })).toBe(3);
    });

    it('copies a thread: the copy has its messages and goes on alone', async () => {
      const thread = await client.threads.create({ metadata: { origin: 'copied' } });
      await client.runs.wait(thread.thread_id, 'agent', { input: human('run: echo hi') });
      const copy = await client.threads.copy(thread.thread_id);
      expect(copy.thread_id).not.toBe(thread.thread_id);
      expect(copy.metadata).toMatchObject({ origin: 'copied' });
      const [original, copied] = await Promise.all([
        client.threads.getState(thread.thread_id),
        client.threads.getState(copy.thread_id),
      ]);
      expect(messagesOf(copied.values)).toEqual(messagesOf(original.values));
      const values = await client.runs.wait(copy.thread_id, 'agent', { input: human('and then?') });
      expect(typesOf(values)).toEqual(['human', 'ai', 'tool', 'ai', 'human', 'ai']);
      expect(typesOf((await client.threads.getState(thread.thread_id)).values)).toEqual([
        'human',
        'ai',
        'tool',
        'ai',
      ]);
      expect((await client.threads.getHistory(copy.thread_id, { limit: 100 })).length).toBe(
        (await client.threads.getHistory(thread.thread_id, { limit: 100 })).length + 2,
      );
    });

    it('refuses to write state from outside a run, and the thread is untouched', async () => {
      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, 'agent', { input: human('hello') });
      const before = await client.threads.getState(thread.thread_id);
      const failure = await failureOf(
        client.threads.updateState(thread.thread_id, {
          values: { messages: [{ type: 'human', content: 'sneaked in' }] },
        }),
      );
      expect(failure).toMatchObject({ status: 422, body: { error: { code: 'state_not_writable' } } });
      expect(await client.threads.getState(thread.thread_id)).toEqual(before);
      expect(await failureOf(client.threads.updateState('no-such-thread', { values: {} }))).toMatchObject({
        status: 404,
      });
    });
  });

  it('answers an unknown path under /assistants in the documented shape', async () => {
    const response = await call(harness.base, 'GET', '/assistants/no%20such/graph');
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ error: { code: 'assistant_not_found' } });
  });
});
