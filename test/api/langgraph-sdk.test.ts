/**
 * Contract tests: LangGraph's own JS SDK (`@langchain/langgraph-sdk`), unmodified, against a real
 * Keel API and worker on the test Temporal server, with the offline scripted model.
 */
import { Client } from '@langchain/langgraph-sdk';
import { protocolStreamModes, type ProtocolStreamMode } from '../../api/protocol/stream-modes';
import { apiHarness, call, failureOf } from '../helpers/api';
import { human, typesOf, type WireMessage } from '../helpers/langgraph-wire';

jest.setTimeout(120_000);

interface StreamPart {
  id?: string;
  event: string;
  data: unknown;
}

/** An event as a shape: its name, and what it carries (message types, the node that produced it). */
function shapeOf(part: StreamPart): string {
  if (part.event === 'values') return `values [${typesOf(part.data).join(',')}]`;
  if (part.event === 'messages') {
    const [message, metadata] = part.data as [WireMessage, { langgraph_node: string }];
    const type = message.type === 'AIMessageChunk' ? 'ai' : message.type;
    return `messages ${type}@${metadata.langgraph_node}`;
  }
  return part.event;
}

/** Consecutive equal shapes as one (a model's text arrives in as many chunks as it likes). */
const collapse = (shapes: string[]): string[] => shapes.filter((shape, index) => shape !== shapes[index - 1]);

async function collect(stream: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const parts: StreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

describe("LangGraph's JS SDK against Keel", () => {
  // As an operator lets a LangGraph chat UI on its dev server call the API.
  const browserApp = 'http://localhost:3000';
  const harness = apiHarness(() => ({ KEEL_API_CORS_ORIGINS: browserApp }));
  let client: Client;
  beforeAll(() => {
    client = new Client({ apiUrl: harness.base });
  });

  describe('system', () => {
    it('answers /ok and /info', async () => {
      expect((await call(harness.base, 'GET', '/ok')).body).toEqual({ ok: true });
      const info = await call(harness.base, 'GET', '/info');
      expect(info.status).toBe(200);
      expect(info.body).toMatchObject({ version: expect.any(String), flags: { assistants: true } });
    });

    it("answers a listed origin's preflight and exposes Content-Location to its page", async () => {
      const preflight = await fetch(`${harness.base}/threads/x/runs/stream`, {
        method: 'OPTIONS',
        headers: {
          origin: browserApp,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type,x-api-key',
        },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(browserApp);
      expect(preflight.headers.get('access-control-allow-methods')).toContain('POST');
      expect(preflight.headers.get('access-control-allow-headers')).toBe('content-type,x-api-key');
      const info = await fetch(`${harness.base}/info`, { headers: { origin: browserApp } });
      expect(info.headers.get('access-control-allow-origin')).toBe(browserApp);
      expect(info.headers.get('access-control-expose-headers')).toContain('Content-Location');
      const other = await fetch(`${harness.base}/info`, { headers: { origin: 'http://localhost:3001' } });
      expect(other.headers.get('access-control-allow-origin')).toBeNull();
    });

    it('takes the calls the SDK makes without a body (copy, cancel) and refuses a body that is not JSON', async () => {
      const thread = await client.threads.create();
      const copy = await client.threads.copy(thread.thread_id);
      expect(copy.thread_id).not.toBe(thread.thread_id);
      const plain = await fetch(`${harness.base}/threads`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: JSON.stringify({ thread_id: 'plain-body' }),
      });
      expect(plain.status).toBe(415);
      expect(await plain.json()).toMatchObject({ error: { code: 'unsupported_media_type' } });
    });
  });

  describe('assistants', () => {
    it('has the default assistant, agent, found by id and by graph', async () => {
      const agent = await client.assistants.get('agent');
      expect(agent).toMatchObject({ assistant_id: 'agent', graph_id: 'agent', version: 1 });
      const found = await client.assistants.search({ graphId: 'agent' });
      expect(found.map((assistant) => assistant.assistant_id)).toEqual(['agent']);
      expect(await client.assistants.search({ graphId: 'another' })).toEqual([]);
    });

    it('answers an unknown assistant with 404 in the documented error shape', async () => {
      const failure = await failureOf(client.assistants.get('nobody'));
      expect(failure).toEqual({
        status: 404,
        body: {
          error: {
            type: 'not_found_error',
            code: 'assistant_not_found',
            message: 'assistant nobody not found',
          },
          detail: 'assistant nobody not found',
        },
      });
    });
  });

  describe('threads and runs', () => {
    it('creates, reads and finds threads by the graph they run', async () => {
      const thread = await client.threads.create({ metadata: { owner_app: 'contract' } });
      expect(await client.threads.get(thread.thread_id)).toMatchObject({
        thread_id: thread.thread_id,
        metadata: { owner_app: 'contract', graph_id: 'agent' },
      });
      const found = await client.threads.search({ metadata: { graph_id: 'agent', owner_app: 'contract' } });
      expect(found.map((candidate) => candidate.thread_id)).toContain(thread.thread_id);
    });

    it('waits for a plain chat and answers with LangChain messages', async () => {
      const thread = await client.threads.create();
      const values = (await client.runs.wait(thread.thread_id, 'agent', { input: human('hello there') })) as {
        messages: WireMessage[];
      };
      expect(typesOf(values)).toEqual(['human', 'ai']);
      expect(values.messages[0]).toMatchObject({
        type: 'human',
        content: 'hello there',
        id: expect.any(String),
      });
      expect(values.messages[1]).toMatchObject({
        type: 'ai',
        content: expect.stringContaining('hello there'),
        tool_calls: [],
        response_metadata: { model_name: expect.any(String), stop_reason: 'end_turn' },
      });
    });

    it('accepts input in the role form too', async () => {
      const thread = await client.threads.create();
      const values = await client.runs.wait(thread.thread_id, 'agent', {
        input: { messages: [{ role: 'user', content: 'as a role' }] },
      });
      expect(typesOf(values)).toEqual(['human', 'ai']);
    });

    it('creates a thread with its run and records the assistant on it', async () => {
      const threadId = crypto.randomUUID();
      await client.runs.wait(threadId, 'agent', { input: human('first words'), ifNotExists: 'create' });
      expect((await client.threads.get(threadId)).metadata).toEqual({
        graph_id: 'agent',
        assistant_id: 'agent',
      });
    });

    it('streams a tool turn, reads the run id from Content-Location, and resumes with joinStream', async () => {
      const thread = await client.threads.create();
      let created: { run_id: string; thread_id?: string } | undefined;
      const parts = await collect(
        client.runs.stream(thread.thread_id, 'agent', {
          input: human('run: echo hi'),
          streamMode: ['values', 'messages-tuple'],
          onRunCreated: (meta) => {
            created = meta;
          },
        }) as AsyncIterable<StreamPart>,
      );
      const runId = (parts[0]!.data as { run_id: string }).run_id;
      expect(created).toEqual({ run_id: runId, thread_id: thread.thread_id });
      expect(parts[0]!.event).toBe('metadata');
      const durable = parts.slice(1);
      expect(durable.every((part) => typeof part.id === 'string' && part.id !== '')).toBe(true);
      expect(new Set(durable.map((part) => part.id)).size).toBe(durable.length);

      const tool = durable.find((part) => shapeOf(part) === 'messages tool@tools')!;
      expect((tool.data as [WireMessage])[0]).toMatchObject({ type: 'tool', content: 'hi\n' });
      const finalValues = durable.at(-1)!.data as { messages: WireMessage[] };
      expect(finalValues.messages[1]!.tool_calls).toEqual([
        { name: 'bash', args: { command: 'echo hi' }, id: expect.any(String), type: 'tool_call' },
      ]);
      expect(finalValues.messages[2]!.tool_call_id).toBe(finalValues.messages[1]!.tool_calls![0]!.id);

      // Resuming after any event replays exactly what came after it.
      // One Keel event became several LangGraph events: resuming between them repeats none.
      const inside = durable.findIndex((part) => part.id!.includes('-'));
      expect(inside).toBeGreaterThan(0);
      for (const cut of [1, inside, Math.floor(durable.length / 2), durable.length - 2]) {
        const rest = await collect(
          client.runs.joinStream(thread.thread_id, runId, {
            lastEventId: durable[cut]!.id!,
            streamMode: ['values', 'messages-tuple'],
          }) as AsyncIterable<StreamPart>,
        );
        expect(rest.filter((part) => part.event !== 'metadata').map((part) => [part.id, part.event])).toEqual(
          durable.slice(cut + 1).map((part) => [part.id, part.event]),
        );
      }
    });

    it('shows the state and the history of a finished tool turn as checkpoints', async () => {
      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, 'agent', { input: human('run: echo hi') });
      const state = await client.threads.getState(thread.thread_id);
      expect(typesOf(state.values)).toEqual(['human', 'ai', 'tool', 'ai']);
      expect(state.next).toEqual([]);
      const history = await client.threads.getHistory(thread.thread_id);
      expect(history[0]!.checkpoint).toEqual(state.checkpoint);
      expect(
        history.map((entry) => [typesOf(entry.values).length, entry.metadata?.step, entry.next]),
      ).toEqual([
        [4, 2, []],
        [3, 1, ['agent']],
        [1, 0, ['agent']],
        [0, -1, ['__start__']],
      ]);
      history.slice(0, -1).forEach((entry, index) => {
        expect(entry.parent_checkpoint?.checkpoint_id).toBe(history[index + 1]!.checkpoint.checkpoint_id);
      });
      const earlier = await client.threads.getState(thread.thread_id, history[1]!.checkpoint);
      expect(earlier).toEqual(history[1]);
      expect(await client.threads.getState(thread.thread_id, history[2]!.checkpoint.checkpoint_id!)).toEqual(
        history[2],
      );
      const unknown = await failureOf(
        client.threads.getState(thread.thread_id, { ...state.checkpoint, checkpoint_id: 'm999' }),
      );
      expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'checkpoint_not_found' } } });
      // A checkpoint that names no id is the latest, as LangGraph's config without one is.
      for (const body of [{}, { checkpoint: {} }, { checkpoint: { checkpoint_ns: '' } }])
        expect(
          await call(harness.base, 'POST', `/threads/${thread.thread_id}/state/checkpoint`, body),
        ).toMatchObject({
          status: 200,
          body: state,
        });
      const older = await client.threads.getHistory(thread.thread_id, {
        limit: 2,
        before: { configurable: { checkpoint_id: history[1]!.checkpoint.checkpoint_id } },
      });
      expect(older.map((entry) => entry.checkpoint.checkpoint_id)).toEqual(
        history.slice(2, 4).map((entry) => entry.checkpoint.checkpoint_id),
      );
    });

    it('creates a background run and joins it', async () => {
      const thread = await client.threads.create();
      const run = await client.runs.create(thread.thread_id, 'agent', { input: human('in the background') });
      expect(run.run_id).toEqual(expect.any(String));
      const values = await client.runs.join(thread.thread_id, run.run_id);
      expect(typesOf(values)).toEqual(['human', 'ai']);
    });
  });

  describe('stream shapes of a tool turn', () => {
    /** The collapsed shapes of a `run: echo hi` turn streamed in these modes. */
    const shapesOf = async (streamMode?: Array<'values' | 'messages-tuple' | 'updates' | 'custom'>) => {
      const thread = await client.threads.create();
      const parts = await collect(
        client.runs.stream(thread.thread_id, 'agent', {
          input: human('run: echo hi'),
          ...(streamMode === undefined ? {} : { streamMode }),
        }) as AsyncIterable<StreamPart>,
      );
      return collapse(parts.map(shapeOf));
    };

    // What LangGraph documents for a tool-calling (ReAct) agent streamed with values and
    // messages-tuple: the input's state, the model's chunks, the state with its tool call, the
    // tool's message, the state with the result, the answer's chunks, the final state.
    const langgraph = [
      'metadata',
      'values [human]',
      'messages ai@agent',
      'values [human,ai]',
      'messages tool@tools',
      'values [human,ai,tool]',
      'messages ai@agent',
      'values [human,ai,tool,ai]',
    ];
    // Keel commits a tool call together with its results (the transcript invariant), so the
    // state holding the call without its results is never a checkpoint and never streamed.
    const keel = langgraph.filter((shape) => shape !== 'values [human,ai]');

    it("values and messages-tuple: LangGraph's sequence, less the state between a call and its results", async () => {
      expect(await shapesOf(['values', 'messages-tuple'])).toEqual(keel);
    });

    it('values alone is what a client gets when it names no stream mode', async () => {
      const values = keel.filter((shape) => !shape.startsWith('messages'));
      expect(await shapesOf(['values'])).toEqual(values);
      expect(await shapesOf()).toEqual(values);
    });

    it("updates: each node's output; custom: Keel's own events", async () => {
      const thread = await client.threads.create();
      const parts = await collect(
        client.runs.stream(thread.thread_id, 'agent', {
          input: human('run: echo hi'),
          streamMode: ['updates', 'custom'],
        }) as AsyncIterable<StreamPart>,
      );
      const shapes = parts.map((part) =>
        part.event === 'updates'
          ? `updates ${Object.keys(part.data as object).join(',')}`
          : part.event === 'custom'
            ? `custom ${(part.data as { event: string }).event}`
            : part.event,
      );
      expect(shapes.filter((shape) => shape.startsWith('updates'))).toEqual([
        'updates agent',
        'updates tools',
        'updates agent',
      ]);
      expect(shapes).toEqual(
        expect.arrayContaining(['custom tool.started', 'custom tool.completed', 'custom usage.updated']),
      );
    });
  });

  describe('stream shapes of a tool turn: tasks, debug, messages', () => {
    type Mode = ProtocolStreamMode;
    const streamTurn = async (streamMode: Mode[]) => {
      const thread = await client.threads.create();
      const parts = await collect(
        client.runs.stream(thread.thread_id, 'agent', {
          input: human('run: echo hi'),
          streamMode,
        }) as AsyncIterable<StreamPart>,
      );
      return { thread, parts };
    };
    interface Task {
      id: string;
      name: string;
      input?: unknown;
      triggers?: string[];
      error?: unknown;
      result?: Array<[string, { messages?: WireMessage[] } | WireMessage[]]>;
      interrupts?: unknown[];
    }
    const taskShape = (task: Task) =>
      'input' in task
        ? `start ${task.name} [${typesOf(task.input).join(',')}] ${task.triggers!.join(',')}`
        : `result ${task.name} ${task.result!.map(([channel, value]) => `${channel}:${(value as WireMessage[]).map((m) => m.type).join(',')}`).join(';')}`;

    // LangGraph's tasks for a tool-calling agent: the agent runs and writes its tool call, the
    // tools node runs and writes the tool message, the agent runs again and writes the answer.
    it('tasks: a start and a result per node run, ids pairing them', async () => {
      const { parts } = await streamTurn(['tasks']);
      const tasks = parts.filter((part) => part.event === 'tasks').map((part) => part.data as Task);
      expect(tasks.map(taskShape)).toEqual([
        'start agent [human] branch:to:agent',
        'result agent messages:ai',
        'start tools [human,ai] branch:to:tools',
        'result tools messages:tool',
        'start agent [human,ai,tool] branch:to:agent',
        'result agent messages:ai',
      ]);
      expect(parts.map((part) => part.event)).toEqual(['metadata', ...tasks.map(() => 'tasks')]);
      for (let index = 0; index < tasks.length; index += 2) {
        expect(tasks[index + 1]!.id).toBe(tasks[index]!.id);
        expect(tasks[index + 1]).toMatchObject({ error: null, interrupts: [] });
        expect(Object.keys(tasks[index]!).sort()).toEqual(['id', 'input', 'name', 'triggers']);
      }
      expect(new Set(tasks.map((task) => task.id)).size).toBe(3);
    });

    it('debug: checkpoint, task and task_result, with the step and the time of each', async () => {
      const { thread, parts } = await streamTurn(['debug', 'checkpoints']);
      const debug = parts
        .filter((part) => part.event === 'debug')
        .map((part) => part.data as { type: string; step: number; timestamp: string; payload: Task });
      expect(debug.map((entry) => `${entry.type} ${entry.step} ${entry.payload.name ?? ''}`.trim())).toEqual([
        'checkpoint 0',
        'task 1 agent',
        'task_result 1 agent',
        'task 1 tools',
        'task_result 1 tools',
        'checkpoint 1',
        'task 2 agent',
        'task_result 2 agent',
        'checkpoint 2',
      ]);
      expect(debug.every((entry) => !Number.isNaN(Date.parse(entry.timestamp)))).toBe(true);
      // A debug checkpoint wraps what `checkpoints` sends, and history lists the same checkpoints.
      const checkpoints = parts.filter((part) => part.event === 'checkpoints').map((part) => part.data);
      expect(debug.filter((entry) => entry.type === 'checkpoint').map((entry) => entry.payload)).toEqual(
        checkpoints,
      );
      const history = await client.threads.getHistory(thread.thread_id);
      expect(
        checkpoints.map(
          (checkpoint) =>
            (checkpoint as { config: { configurable: { checkpoint_id: string } } }).config.configurable
              .checkpoint_id,
        ),
      ).toEqual(
        history
          .slice(0, -1)
          .reverse()
          .map((entry) => entry.checkpoint.checkpoint_id),
      );
    });

    it('messages: metadata the first time a message is seen, the AI message so far, whole tool messages', async () => {
      const { parts } = await streamTurn(['messages']);
      const shapes = parts.map((part) => {
        if (part.event === 'messages/metadata') return part.event;
        if (part.event.startsWith('messages/')) {
          const [message] = part.data as WireMessage[];
          return `${part.event} ${message!.type}`;
        }
        return part.event;
      });
      expect(collapse(shapes)).toEqual([
        'metadata',
        'messages/metadata',
        'messages/partial ai',
        'messages/metadata',
        'messages/complete tool',
        'messages/metadata',
        'messages/partial ai',
      ]);
      const partials = parts
        .filter((part) => part.event === 'messages/partial')
        .map((part) => (part.data as WireMessage[])[0]!);
      // The call's message ends carrying its tool call; the answer's last partial is the whole answer.
      const call = partials.filter((message) => message.id === partials[0]!.id).at(-1)!;
      expect(call.tool_calls).toEqual([
        { name: 'bash', args: { command: 'echo hi' }, id: expect.any(String), type: 'tool_call' },
      ]);
      const answer = partials.at(-1)!;
      const texts = partials
        .filter((message) => message.id === answer.id)
        .map((message) => message.content as string);
      texts.forEach((text, index) => expect(text.startsWith(texts[index - 1] ?? '')).toBe(true));
      expect(answer.content).toEqual(expect.stringContaining('hi'));
    });

    // What astream_events (v2) tells of a tool-calling agent, in a faithful subset: the graph, each
    // node, the model calls with their chunks, and each tool, each started and ended.
    it('events: the graph, its nodes, the model calls and the tools, started and ended', async () => {
      const { parts } = await streamTurn(['events']);
      const events = parts
        .filter((part) => part.event === 'events')
        .map((part) => part.data as { event: string; name: string; run_id: string; parent_ids: string[] });
      const shapes = collapse(events.map((event) => `${event.event} ${event.name}`));
      expect(shapes).toEqual([
        'on_chain_start LangGraph',
        'on_chain_start agent',
        'on_chat_model_start ChatModel',
        ...(shapes[3] === 'on_chat_model_stream ChatModel' ? ['on_chat_model_stream ChatModel'] : []),
        'on_chat_model_end ChatModel',
        'on_chain_end agent',
        'on_chain_start tools',
        'on_tool_start bash',
        'on_tool_end bash',
        'on_chain_end tools',
        'on_chain_start agent',
        'on_chat_model_start ChatModel',
        'on_chat_model_stream ChatModel',
        'on_chat_model_end ChatModel',
        'on_chain_end agent',
        'on_chain_end LangGraph',
      ]);
      // Every start has its end under the same run id, and every parent started before.
      const started = new Set<string>();
      for (const event of events) {
        if (event.event.endsWith('_start')) started.add(event.run_id);
        if (event.event.endsWith('_end')) expect(started.has(event.run_id)).toBe(true);
        event.parent_ids.forEach((parent) => expect(started.has(parent)).toBe(true));
      }
    });

    it('several modes at once, and joinStream after any event repeats and skips nothing', async () => {
      const modes: Mode[] = [...protocolStreamModes];
      const { thread, parts } = await streamTurn(modes);
      const runId = (parts[0]!.data as { run_id: string }).run_id;
      const durable = parts.slice(1);
      expect(new Set(durable.map((part) => part.event))).toEqual(
        new Set([
          'values',
          'messages',
          'messages/metadata',
          'messages/partial',
          'messages/complete',
          'updates',
          'custom',
          'checkpoints',
          'tasks',
          'debug',
          'events',
        ]),
      );
      expect(durable.every((part) => typeof part.id === 'string' && part.id !== '')).toBe(true);
      expect(new Set(durable.map((part) => part.id)).size).toBe(durable.length);
      // Each mode on its own sends what it sends among the others, in the same order.
      const alone = (await streamTurn(['tasks'])).parts.slice(1);
      expect(
        durable.filter((part) => part.event === 'tasks').map((part) => taskShape(part.data as Task)),
      ).toEqual(alone.map((part) => taskShape(part.data as Task)));
      for (let cut = 0; cut < durable.length - 1; cut++) {
        const rest = await collect(
          client.runs.joinStream(thread.thread_id, runId, {
            lastEventId: durable[cut]!.id!,
            streamMode: modes,
          }) as AsyncIterable<StreamPart>,
        );
        expect(rest.filter((part) => part.event !== 'metadata')).toEqual(durable.slice(cut + 1));
      }
    });
  });

  describe('bad input', () => {
    it('refuses a run for an unknown assistant with 404, and the thread is untouched', async () => {
      const thread = await client.threads.create();
      const failure = await failureOf(client.runs.wait(thread.thread_id, 'nobody', { input: human('hi') }));
      expect(failure.status).toBe(404);
      expect(failure.body.error).toMatchObject({ code: 'assistant_not_found' });
      expect(await client.runs.list(thread.thread_id)).toEqual([]);
    });

    it('refuses an unsupported stream mode with 422, and the thread is untouched', async () => {
      const thread = await client.threads.create();
      const response = await call(harness.base, 'POST', `/threads/${thread.thread_id}/runs/stream`, {
        assistant_id: 'agent',
        input: human('hi'),
        stream_mode: ['values', 'tools'],
      });
      expect(response.status).toBe(422);
      expect(response.body).toMatchObject({
        error: { type: 'invalid_request_error', code: 'unsupported_stream_mode', param: 'stream_mode' },
        detail: expect.stringContaining('"tools" is not supported yet'),
      });
      expect(await client.runs.list(thread.thread_id)).toEqual([]);
    });
  });
});
