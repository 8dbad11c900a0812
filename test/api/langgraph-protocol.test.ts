/**
 * Contract tests, second slice: assistants, thread and run management, interrupts and crons,
 * driven by LangGraph's own JS SDK (`@langchain/langgraph-sdk`), unmodified, against a real Keel
 * API and worker on the test Temporal server, with the offline scripted model.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@langchain/langgraph-sdk';
import { apiHarness, call, failureOf, startTestApi } from '../helpers/api';
import { human, messagesOf, typesOf } from '../helpers/langgraph-wire';

jest.setTimeout(120_000);

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
      const again = await startTestApi(harness.client, harness.config);
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
      // The thread records the assistant its run went through, as LangGraph's do.
      expect((await client.threads.get(thread.thread_id)).metadata).toEqual({
        graph_id: 'agent',
        assistant_id: strict.assistant_id,
      });

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

    it('refuses to copy a thread with a run under way (409 thread_busy), and copies it once over', async () => {
      const thread = await client.threads.create();
      const run = await client.runs.create(thread.thread_id, 'agent', { input: human('run: sleep 2') });
      const failure = await failureOf(client.threads.copy(thread.thread_id));
      expect(failure.status).toBe(409);
      expect(failure.body.error).toMatchObject({ code: 'thread_busy' });
      await client.runs.join(thread.thread_id, run.run_id);
      const copy = await client.threads.copy(thread.thread_id);
      expect(messagesOf((await client.threads.getState(copy.thread_id)).values)).toEqual(
        messagesOf((await client.threads.getState(thread.thread_id)).values),
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
      expect(failure).toMatchObject({ status: 403, body: { error: { code: 'state_not_writable' } } });
      expect(await client.threads.getState(thread.thread_id)).toEqual(before);
      expect(await failureOf(client.threads.updateState('no-such-thread', { values: {} }))).toMatchObject({
        status: 404,
      });
    });
  });

  describe('human in the loop as interrupts', () => {
    interface HumanInterruptWire {
      id: string;
      value: {
        action_request: { action: string; args: Record<string, unknown> };
        config: Record<string, boolean>;
        description: string;
      };
    }
    let asking: string;
    beforeAll(async () => {
      asking = (
        await client.assistants.create({
          graphId: 'agent',
          config: { configurable: { tool_rules: { bash: 'ask' } } },
        })
      ).assistant_id;
    });

    /** A thread whose run waits on an approval for `run: echo <word>`, and the stream that showed it. */
    const interrupted = async (word: string) => {
      const thread = await client.threads.create();
      const parts: Array<{ event: string; data: unknown }> = [];
      for await (const part of client.runs.stream(thread.thread_id, asking, {
        input: human(`run: echo ${word}`),
        streamMode: ['values', 'updates'],
      }))
        parts.push(part);
      return { threadId: thread.thread_id, parts };
    };

    it('shows a pending approval as an interrupt in the stream, the state and the thread', async () => {
      const { threadId, parts } = await interrupted('hi');
      // The stream ends at the interrupt, saying so (the run waits, it has not failed).
      expect(parts.at(-1)!.event).toBe('end');
      const last = parts.at(-2)!;
      expect(last.event).toBe('values');
      const [interrupt] = (last.data as { __interrupt__: HumanInterruptWire[] }).__interrupt__;
      expect(interrupt).toMatchObject({
        id: expect.any(String),
        value: {
          action_request: { action: 'bash', args: { command: 'echo hi' } },
          config: { allow_accept: true, allow_edit: true, allow_respond: true, allow_ignore: true },
          description: expect.stringContaining('bash'),
        },
      });
      expect(parts.some((part) => part.event === 'updates' && '__interrupt__' in (part.data as object))).toBe(
        true,
      );

      const thread = await client.threads.get(threadId);
      expect(thread.status).toBe('interrupted');
      expect(Object.values(thread.interrupts).flat()).toEqual([interrupt]);
      const state = await client.threads.getState(threadId);
      expect(state.next).toEqual(['tools']);
      expect(state.tasks[0]!.interrupts).toEqual([interrupt]);
      expect((state as unknown as { interrupts: unknown[] }).interrupts).toEqual([interrupt]);
    });

    it('resumes with accept: the tool runs and the stream goes on to the answer', async () => {
      const { threadId } = await interrupted('accepted');
      const parts: Array<{ event: string; data: unknown }> = [];
      for await (const part of client.runs.stream(threadId, asking, {
        command: { resume: [{ type: 'accept', args: null }] },
        streamMode: ['values'],
      }))
        parts.push(part);
      const final = messagesOf(parts.at(-1)!.data);
      expect(final.map((message) => message.type)).toEqual(['human', 'ai', 'tool', 'ai']);
      expect(final[2]!.content).toBe('accepted\n');
      expect((await client.threads.get(threadId)).status).toBe('idle');
    });

    it('resumes with edited arguments: the tool runs with them and the call shows them', async () => {
      const { threadId } = await interrupted('original');
      const values = await client.runs.wait(threadId, asking, {
        command: { resume: [{ type: 'edit', args: { action: 'bash', args: { command: 'echo edited' } } }] },
      });
      const final = messagesOf(values);
      expect(final[1]!.tool_calls![0]!.args).toEqual({ command: 'echo edited' });
      expect(final[2]!.content).toBe('edited\n');
    });

    it('resumes with a response: the call is denied and the model reads the reason', async () => {
      const { threadId } = await interrupted('denied');
      const [interrupt] = Object.values((await client.threads.get(threadId)).interrupts).flat() as Array<{
        id: string;
      }>;
      const values = await client.runs.wait(threadId, asking, {
        command: { resume: { [interrupt!.id]: { type: 'response', args: 'not on this machine' } } },
      });
      const tool = messagesOf(values).find((message) => message.type === 'tool')!;
      expect(tool.content).toContain('not on this machine');
      expect(tool.content).toContain('denied');
    });

    it('refuses a resume with nothing pending and a malformed command, and the thread is untouched', async () => {
      const idle = await client.threads.create();
      await client.runs.wait(idle.thread_id, 'agent', { input: human('hello') });
      const before = await client.threads.getState(idle.thread_id);
      expect(
        await failureOf(
          client.runs.wait(idle.thread_id, 'agent', { command: { resume: [{ type: 'accept' }] } }),
        ),
      ).toMatchObject({
        status: 409,
        body: { error: { code: 'nothing_to_resume', param: 'command.resume' } },
      });
      expect(await client.threads.getState(idle.thread_id)).toEqual(before);

      const { threadId } = await interrupted('waiting');
      const pending = await client.threads.getState(threadId);
      expect(await failureOf(client.runs.wait(threadId, asking, { command: { resume: 42 } }))).toMatchObject({
        status: 422,
        body: { error: { code: 'invalid_resume' } },
      });
      const both = await call(harness.base, 'POST', `/threads/${threadId}/runs/wait`, {
        assistant_id: asking,
        input: human('and this'),
        command: { resume: [{ type: 'accept' }] },
      });
      expect(both).toMatchObject({ status: 422, body: { error: { code: 'validation_error' } } });
      const goto = await call(harness.base, 'POST', `/threads/${threadId}/runs/wait`, {
        assistant_id: asking,
        command: { goto: 'tools' },
      });
      expect(goto).toMatchObject({ status: 422, body: { error: { code: 'validation_error' } } });
      expect(await client.threads.getState(threadId)).toEqual(pending);
      expect((await client.threads.get(threadId)).status).toBe('interrupted');
    });
  });

  describe('runs', () => {
    it('lists, pages, gets and deletes runs; an unfinished run cannot be deleted', async () => {
      const thread = await client.threads.create();
      for (const word of ['one', 'two', 'three'])
        await client.runs.wait(thread.thread_id, 'agent', { input: human(word) });
      const runs = await client.runs.list(thread.thread_id);
      expect(runs).toHaveLength(3);
      const page = await client.runs.list(thread.thread_id, { limit: 1, offset: 1 });
      expect(page.map((run) => run.run_id)).toEqual([runs[1]!.run_id]);
      expect(await client.runs.get(thread.thread_id, runs[0]!.run_id)).toMatchObject({ status: 'completed' });
      await client.runs.delete(thread.thread_id, runs[0]!.run_id);
      expect(await failureOf(client.runs.get(thread.thread_id, runs[0]!.run_id))).toMatchObject({
        status: 404,
        body: { error: { code: 'run_not_found' } },
      });
      // Its messages stay: the thread's state is what it was.
      expect(typesOf((await client.threads.getState(thread.thread_id)).values)).toHaveLength(6);
    });

    /** A run on a new thread, waiting on the approval its `bash` call asks for. */
    const interruptedRun = async (text: string) => {
      const asking = (
        await client.assistants.create({
          graphId: 'agent',
          config: { configurable: { tool_rules: { bash: 'ask' } } },
        })
      ).assistant_id;
      const thread = await client.threads.create();
      const run = await client.runs.create(thread.thread_id, asking, { input: human(text) });
      await eventually(
        () => client.threads.get(thread.thread_id),
        (current) => current.status === 'interrupted',
      );
      return { asking, thread, run };
    };

    it('cancels with rollback: the waiting run ends cancelled, what it committed stays valid', async () => {
      const { thread, run } = await interruptedRun('run: echo never');
      expect(await failureOf(client.runs.delete(thread.thread_id, run.run_id))).toMatchObject({
        status: 409,
        body: { error: { code: 'run_active' } },
      });
      const cancelled = await client.runs.cancel(thread.thread_id, run.run_id, true, 'rollback');
      expect(cancelled).toMatchObject({ run_id: run.run_id, status: 'cancelled' });
      const values = (await client.threads.getState(thread.thread_id)).values;
      const tool = messagesOf(values).find((message) => message.type === 'tool')!;
      expect(tool.content).toContain('did not finish');
      expect((await client.threads.get(thread.thread_id)).status).toBe('idle');
    });

    it('a new run with multitask_strategy rollback replaces the one under way', async () => {
      const { asking, thread, run: first } = await interruptedRun('run: echo first');
      const values = await client.runs.wait(thread.thread_id, asking, {
        input: human('never mind'),
        multitaskStrategy: 'rollback',
      });
      expect(messagesOf(values).at(-1)!.content).toEqual(expect.stringContaining('never mind'));
      expect(await client.runs.get(thread.thread_id, first.run_id)).toMatchObject({ status: 'cancelled' });
    });

    it('runs statelessly: wait, stream and create; the thread goes unless kept', async () => {
      // The server's values ("delete" | "keep"), as the Python SDK types them; the JS SDK's types lag.
      const keep = { onCompletion: 'keep' } as unknown as Record<string, never>;
      let created: { run_id: string; thread_id?: string } | undefined;
      const values = await client.runs.wait(null, 'agent', {
        input: human('no thread needed'),
        onRunCreated: (meta) => {
          created = meta;
        },
      });
      expect(typesOf(values)).toEqual(['human', 'ai']);
      const gone = await eventually(
        () => call(harness.base, 'GET', `/threads/${created!.thread_id}`),
        (response) => response.status === 404,
      );
      expect(gone.status).toBe(404);

      const parts: Array<{ event: string; data: unknown }> = [];
      for await (const part of client.runs.stream(null, 'agent', {
        input: human('streamed'),
        ...keep,
      }))
        parts.push(part);
      const { thread_id } = parts[0]!.data as { thread_id: string };
      expect(typesOf(parts.at(-1)!.data)).toEqual(['human', 'ai']);
      expect(typesOf((await client.threads.getState(thread_id)).values)).toEqual(['human', 'ai']);

      const background = await client.runs.create(null, 'agent', {
        input: human('later'),
        ...keep,
      });
      expect(typesOf(await client.runs.join(background.thread_id, background.run_id))).toEqual([
        'human',
        'ai',
      ]);
    });

    it('runs from the newest checkpoint as any run (forking is in langgraph-fork.test.ts)', async () => {
      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, 'agent', { input: human('first') });
      const [newest] = await client.threads.getHistory(thread.thread_id);
      const values = await client.runs.wait(thread.thread_id, 'agent', {
        input: human('second'),
        checkpoint: newest!.checkpoint,
      });
      expect(typesOf(values)).toEqual(['human', 'ai', 'human', 'ai']);
      expect(await client.threads.getHistory(thread.thread_id)).toHaveLength(5);
      expect(await client.runs.list(thread.thread_id)).toHaveLength(2);
    });
  });

  describe('crons on Temporal Schedules', () => {
    /** Fires the cron's schedule now, as Temporal would at its time. */
    const fire = (cronId: string) => harness.client.schedule.getHandle(`cron-${cronId}`).trigger();

    it('runs a thread cron as an ordinary run of the thread; search, count and delete it', async () => {
      const thread = await client.threads.create();
      const cron = await client.crons.createForThread(thread.thread_id, 'agent', {
        schedule: '0 9 * * *',
        input: human('scheduled hello'),
        metadata: { purpose: 'contract' },
      });
      expect(cron).toMatchObject({
        cron_id: expect.any(String),
        thread_id: thread.thread_id,
        assistant_id: 'agent',
        schedule: '0 9 * * *',
        enabled: true,
        next_run_date: expect.any(String),
      });
      await fire(cron.cron_id);
      const runs = await eventually(
        () => client.runs.list(thread.thread_id),
        (listed) => listed.length === 1 && (listed[0]!.status as string) === 'completed',
      );
      expect(runs[0]).toMatchObject({ status: 'completed', metadata: { cron_id: cron.cron_id } });
      expect(messagesOf((await client.threads.getState(thread.thread_id)).values)[0]).toMatchObject({
        type: 'human',
        content: 'scheduled hello',
      });

      const found = await eventually(
        () => client.crons.search({ threadId: thread.thread_id }),
        (crons) => crons.length === 1,
      );
      expect(found.map((candidate) => candidate.cron_id)).toEqual([cron.cron_id]);
      expect(await client.crons.count({ threadId: thread.thread_id })).toBe(1);
      await client.crons.delete(cron.cron_id);
      expect(
        await eventually(
          () => client.crons.search({ threadId: thread.thread_id }),
          (crons) => crons.length === 0,
        ),
      ).toEqual([]);
      expect(await failureOf(client.crons.delete(cron.cron_id))).toMatchObject({
        status: 404,
        body: { error: { code: 'cron_not_found' } },
      });
    });

    it('runs a stateless cron on a new thread each time', async () => {
      const cron = await client.crons.create('agent', {
        schedule: '30 8 * * 1-5',
        input: human('fresh start'),
      });
      expect(cron).toMatchObject({ thread_id: null, on_run_completed: 'keep' });
      await fire(cron.cron_id);
      const threads = await eventually(
        () => client.threads.search({ metadata: { cron_id: cron.cron_id } }),
        (found) => found.length === 1,
      );
      expect(threads).toHaveLength(1);
      const state = await eventually(
        () => client.threads.getState(threads[0]!.thread_id),
        (current) => typesOf(current.values).length === 2,
      );
      expect(typesOf(state.values)).toEqual(['human', 'ai']);
      await client.crons.delete(cron.cron_id);
    });

    it('refuses a bad schedule, an unknown assistant or thread, and an unknown cron', async () => {
      const thread = await client.threads.create();
      expect(
        await failureOf(
          client.crons.createForThread(thread.thread_id, 'agent', {
            schedule: 'every so often',
            input: human('x'),
          }),
        ),
      ).toMatchObject({ status: 422, body: { error: { code: 'invalid_schedule', param: 'schedule' } } });
      expect(
        await failureOf(
          client.crons.createForThread(thread.thread_id, 'nobody', {
            schedule: '0 9 * * *',
            input: human('x'),
          }),
        ),
      ).toMatchObject({ status: 404, body: { error: { code: 'assistant_not_found' } } });
      expect(
        await failureOf(
          client.crons.createForThread('no-such-thread', 'agent', {
            schedule: '0 9 * * *',
            input: human('x'),
          }),
        ),
      ).toMatchObject({ status: 404, body: { error: { code: 'thread_not_found' } } });
      expect(await failureOf(client.crons.delete('no-such-cron'))).toMatchObject({
        status: 404,
        body: { error: { code: 'cron_not_found' } },
      });
      expect(await client.crons.search({ threadId: thread.thread_id })).toEqual([]);
    });
  });

  it('streams checkpoints: one per committed step, the same ones history lists', async () => {
    const thread = await client.threads.create();
    const parts: Array<{ event: string; data: unknown }> = [];
    for await (const part of client.runs.stream(thread.thread_id, 'agent', {
      input: human('run: echo hi'),
      streamMode: ['checkpoints'],
    }))
      parts.push(part);
    type CheckpointEvent = {
      config: { configurable: { checkpoint_id: string } };
      parent_config: { configurable: { checkpoint_id: string } } | null;
      metadata: { step: number };
      next: string[];
      values: unknown;
    };
    const checkpoints = parts
      .filter((part) => part.event === 'checkpoints')
      .map((part) => part.data as CheckpointEvent);
    expect(parts.map((part) => part.event)).toEqual([
      'metadata',
      'checkpoints',
      'checkpoints',
      'checkpoints',
    ]);
    expect(
      checkpoints.map((checkpoint) => [
        checkpoint.metadata.step,
        checkpoint.next,
        typesOf(checkpoint.values),
      ]),
    ).toEqual([
      [0, ['agent'], ['human']],
      [1, ['agent'], ['human', 'ai', 'tool']],
      [2, [], ['human', 'ai', 'tool', 'ai']],
    ]);
    const history = (await client.threads.getHistory(thread.thread_id)).reverse();
    expect(checkpoints.map((checkpoint) => checkpoint.config.configurable.checkpoint_id)).toEqual(
      history.slice(1).map((state) => state.checkpoint.checkpoint_id),
    );
    expect(checkpoints.map((checkpoint) => checkpoint.parent_config?.configurable.checkpoint_id)).toEqual(
      history.slice(0, -1).map((state) => state.checkpoint.checkpoint_id),
    );
  });

  it('answers an unknown path under /assistants in the documented shape', async () => {
    const response = await call(harness.base, 'GET', '/assistants/no%20such/graph');
    expect(response.status).toBe(404);
    expect(response.body).toMatchObject({ error: { code: 'assistant_not_found' } });
  });
});
