/**
 * LangGraph parity, through LangGraph's own JS SDK: graph inputs other than `{messages}`, a run
 * with neither input nor command, bare model names in `config.configurable.model`, paging
 * of assistants, threads, runs and crons as LangGraph's server pages them (decisions 0381, 0407),
 * and `joinStream` in the run's own modes (decision 0405).
 */
import { Client } from '@langchain/langgraph-sdk';
import { apiHarness, call, failureOf } from '../helpers/api';
import { readSse } from '../helpers/sse';

jest.setTimeout(120_000);

describe('LangGraph parity through its JS SDK', () => {
  const harness = apiHarness();
  let client: Client;
  beforeAll(() => {
    client = new Client({ apiUrl: harness.base });
  });

  interface StreamPart {
    id?: string;
    event: string;
    data: unknown;
  }
  const collect = async (stream: AsyncIterable<unknown>, stopAfter = Infinity): Promise<StreamPart[]> => {
    const parts: StreamPart[] = [];
    for await (const part of stream as AsyncIterable<StreamPart>) {
      parts.push(part);
      if (parts.length >= stopAfter) break;
    }
    return parts;
  };
  const durable = (parts: StreamPart[]) => parts.filter((part) => part.event !== 'metadata');
  const idsAndEvents = (parts: StreamPart[]) => durable(parts).map((part) => [part.id, part.event]);

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

  it("joins a streamed run in the run's own modes when joinStream names none, after any event", async () => {
    const thread = await client.threads.create();
    const streamed = await collect(
      client.runs.stream(thread.thread_id, 'agent', {
        input: { messages: [{ type: 'human', content: 'run: echo joined' }] },
        streamMode: ['values', 'messages'],
      }),
    );
    const runId = (streamed[0]!.data as { run_id: string }).run_id;
    const events = durable(streamed);
    expect(new Set(events.map((part) => part.event))).toEqual(
      new Set(['values', 'messages/metadata', 'messages/partial', 'messages/complete']),
    );
    const run = await call<{ stream_mode?: string[] }>(
      harness.base,
      'GET',
      `/threads/${thread.thread_id}/runs/${runId}`,
    );
    expect(run.body.stream_mode).toEqual(['values', 'messages']);
    // No Last-Event-ID: the whole run again; after any event: exactly what came after it.
    expect(idsAndEvents(await collect(client.runs.joinStream(thread.thread_id, runId)))).toEqual(
      idsAndEvents(streamed),
    );
    for (const cut of [0, 3, Math.floor(events.length / 2), events.length - 2]) {
      const rest = await collect(
        client.runs.joinStream(thread.thread_id, runId, { lastEventId: events[cut]!.id! }),
      );
      expect(idsAndEvents(rest)).toEqual(events.slice(cut + 1).map((part) => [part.id, part.event]));
    }
  });

  it("joins in the run's own modes when stream_mode is empty or [], as LangGraph reads both as none", async () => {
    const thread = await client.threads.create();
    const streamed = durable(
      await collect(
        client.runs.stream(thread.thread_id, 'agent', {
          input: { messages: [{ type: 'human', content: 'hello' }] },
          streamMode: ['values', 'messages'],
        }),
      ),
    );
    const runId = (await client.runs.list(thread.thread_id, { limit: 1 }))[0]!.run_id;
    const url = `${harness.base}/threads/${thread.thread_id}/runs/${runId}/stream`;
    // `stream_mode=` is what LangGraph's Python SDK sends from join_stream when no mode is asked.
    for (const query of ['?stream_mode=', `?stream_mode=${encodeURIComponent('[]')}`]) {
      const joined = await readSse(`${url}${query}`);
      expect(joined.status).toBe(200);
      expect(
        joined.events
          .filter((event) => event.eventId !== undefined)
          .map((event) => [event.eventId, event.event]),
      ).toEqual(streamed.map((part) => [part.id, part.event]));
    }
  });

  it('joins a run still under way in its own modes: every event after the one the client had', async () => {
    const thread = await client.threads.create();
    // The scripted model takes 2 s over this call: the join comes while the run is under way.
    const first = await collect(
      client.runs.stream(thread.thread_id, 'agent', {
        input: { messages: [{ type: 'human', content: 'think: 2\nrun: echo live' }] },
        streamMode: ['values', 'messages'],
      }),
      2,
    );
    const runId = (first[0]!.data as { run_id: string }).run_id;
    const seen = first[1]!;
    expect(seen.event).toBe('values');
    const rest = durable(
      await collect(client.runs.joinStream(thread.thread_id, runId, { lastEventId: seen.id! })),
    );
    expect(rest.map((part) => part.id)).not.toContain(seen.id);
    expect(new Set(rest.map((part) => part.id)).size).toBe(rest.length);
    expect(new Set(rest.map((part) => part.event))).toEqual(
      new Set(['values', 'messages/metadata', 'messages/partial', 'messages/complete']),
    );
    const state = await client.threads.getState(thread.thread_id);
    expect(rest.at(-1)).toMatchObject({ event: 'values', data: state.values });
    expect(typesOf(state.values)).toEqual(['human', 'ai', 'tool', 'ai']);
  });

  it('joins a run created without a stream in values, as LangGraph runs default to', async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'agent', {
      input: { messages: [{ type: 'human', content: 'hello' }] },
    });
    const joined = durable(await collect(client.runs.joinStream(thread.thread_id, run.run_id)));
    expect(joined.length).toBeGreaterThan(0);
    expect(new Set(joined.map((part) => part.event))).toEqual(new Set(['values']));
  });

  /** Pages of `size` from offset 0 until a short one, and the paging headers of each. */
  const pages = async <T>(
    size: number,
    page: (offset: number) => Promise<{ body: T[]; headers: Headers }>,
  ): Promise<{ items: T[]; headers: Array<[string | null, string | null]> }> => {
    const items: T[] = [];
    const headers: Array<[string | null, string | null]> = [];
    for (let offset = 0; ; offset += size) {
      const answer = await page(offset);
      items.push(...answer.body);
      headers.push([answer.headers.get('x-pagination-next'), answer.headers.get('x-pagination-total')]);
      if (answer.body.length < size) return { items, headers };
    }
  };

  it('pages threads as LangGraph does: every one once, newest first, with its paging headers', async () => {
    const tag = `paged-${Date.now()}`;
    const made: string[] = [];
    for (let index = 0; index < 5; index++)
      made.push((await client.threads.create({ metadata: { tag } })).thread_id);
    const all = await client.threads.search({ metadata: { tag }, limit: 100 });
    expect(all.map((thread) => thread.thread_id)).toEqual([...made].reverse());
    const paged = await pages(2, (offset) =>
      call<Array<{ thread_id: string }>>(harness.base, 'POST', '/threads/search', {
        metadata: { tag },
        limit: 2,
        offset,
      }),
    );
    expect(paged.items.map((thread) => thread.thread_id)).toEqual(all.map((thread) => thread.thread_id));
    expect(paged.headers).toEqual([
      ['2', '3'],
      ['4', '5'],
      [null, '5'],
    ]);
    // sort_by without sort_order is descending, as LangGraph sorts any key.
    const byId = await client.threads.search({ metadata: { tag }, limit: 5, sortBy: 'thread_id' });
    expect(byId.map((thread) => thread.thread_id)).toEqual([...made].sort().reverse());
  });

  it("pages a thread's runs as LangGraph lists them: newest first, every one once", async () => {
    const thread = await client.threads.create();
    const made: string[] = [];
    for (let index = 0; index < 5; index++) {
      const run = await client.runs.create(thread.thread_id, 'agent', {
        input: { messages: [{ type: 'human', content: `turn ${index}` }] },
      });
      made.push(run.run_id);
    }
    await client.runs.join(thread.thread_id, made.at(-1)!);
    const all = await client.runs.list(thread.thread_id, { limit: 100 });
    expect(all.map((run) => run.run_id)).toEqual([...made].reverse());
    const paged: string[] = [];
    for (let offset = 0; offset < 5; offset += 2)
      paged.push(
        ...(await client.runs.list(thread.thread_id, { limit: 2, offset })).map((run) => run.run_id),
      );
    expect(paged).toEqual([...made].reverse());
    // LangGraph's status names filter too: Keel's `completed` is its `success` (decision 0408).
    const succeeded = await client.runs.list(thread.thread_id, { status: 'success', limit: 100 });
    expect(succeeded.map((run) => run.run_id)).toEqual([...made].reverse());
    expect(await client.runs.list(thread.thread_id, { status: 'error' })).toEqual([]);
  });

  it('pages crons as LangGraph does: every one once, descending by any key unless asked, with headers', async () => {
    const thread = await client.threads.create();
    const made: string[] = [];
    for (let index = 0; index < 3; index++) {
      const cron = await client.crons.createForThread(thread.thread_id, 'agent', {
        schedule: `${index} 3 * * *`,
        input: { messages: [{ type: 'human', content: 'nightly' }] },
      });
      made.push(cron.cron_id);
    }
    try {
      const all = await client.crons.search({ threadId: thread.thread_id, limit: 100 });
      expect(all.map((cron) => cron.cron_id)).toEqual([...made].reverse());
      const paged = await pages(2, (offset) =>
        call<Array<{ cron_id: string }>>(harness.base, 'POST', '/runs/crons/search', {
          thread_id: thread.thread_id,
          limit: 2,
          offset,
        }),
      );
      expect(paged.items.map((cron) => cron.cron_id)).toEqual([...made].reverse());
      expect(paged.headers).toEqual([
        ['2', '3'],
        [null, '3'],
      ]);
      const byId = await client.crons.search({ threadId: thread.thread_id, sortBy: 'cron_id' });
      expect(byId.map((cron) => cron.cron_id)).toEqual([...made].sort().reverse());
      // `end_time` is one of LangGraph's keys too; none of these has one (ties by id).
      const byEnd = await call<unknown[]>(harness.base, 'POST', '/runs/crons/search', {
        thread_id: thread.thread_id,
        sort_by: 'end_time',
      });
      expect(byEnd).toMatchObject({ status: 200, body: { length: 3 } });
    } finally {
      for (const cronId of made) await client.crons.delete(cronId);
    }
  });

  it('pages assistants with LangGraph headers and sorts them descending by a key unless asked', async () => {
    const name = `headers-${Date.now()}`;
    const made: string[] = [];
    for (let index = 0; index < 3; index++)
      made.push(
        (await client.assistants.create({ graphId: 'agent', name, metadata: { name } })).assistant_id,
      );
    const first = await client.assistants.search({ metadata: { name }, limit: 2, includePagination: true });
    expect(first.next).toBe('2');
    const last = await client.assistants.search({
      metadata: { name },
      limit: 2,
      offset: 2,
      includePagination: true,
    });
    expect(last.next).toBeNull();
    expect([...first.assistants, ...last.assistants].map((assistant) => assistant.assistant_id)).toEqual(
      [...made].reverse(),
    );
    const byId = await client.assistants.search({ metadata: { name }, sortBy: 'assistant_id' });
    expect(byId.map((assistant) => assistant.assistant_id)).toEqual([...made].sort().reverse());
  });
});
