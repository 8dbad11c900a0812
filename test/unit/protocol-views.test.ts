import type { KeelEvent } from '../../common/events';
import type { Run } from '../../common/run';
import type { Message } from '../../common/transcript';
import { zeroUsage } from '../../common/usage';
import { ApiError } from '../../api/errors';
import { commitUnits, messagesThroughStep, threadCheckpoints } from '../../api/protocol/checkpoints';
import { chunkIdOf, ProtocolTranslator } from '../../api/protocol/run-stream';
import {
  parseStreamMode,
  protocolStreamModes,
  type ProtocolStreamMode,
} from '../../api/protocol/stream-modes';

const at = '2026-01-01T00:00:00.000Z';
const transcript: Message[] = [
  { id: 'm1', run_id: 'r1', created_at: at, role: 'user', content: [{ type: 'text', text: 'run: echo hi' }] },
  {
    id: 'm2',
    run_id: 'r1',
    created_at: at,
    role: 'assistant',
    model: 'scripted:demo',
    stop_reason: 'tool_use',
    content: [
      { type: 'text', text: 'Running.' },
      { type: 'tool_use', id: 'tu1', name: 'bash', input: { command: 'echo hi' } },
    ],
  },
  {
    id: 'm3',
    run_id: 'r1',
    created_at: at,
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'tu1', content: 'hi' }],
  },
  {
    id: 'm4',
    run_id: 'r1',
    created_at: at,
    role: 'assistant',
    model: 'scripted:demo',
    stop_reason: 'end_turn',
    content: [{ type: 'text', text: 'It said hi.' }],
  },
];

describe('stream_mode', () => {
  it.each<[string, unknown, 'body' | 'query', string[] | 'keel']>([
    ["defaults to LangGraph's values", undefined, 'body', ['values']],
    ['takes one mode as a string', 'messages-tuple', 'body', ['messages-tuple']],
    ['takes several as an array', ['values', 'updates', 'custom'], 'body', ['values', 'updates', 'custom']],
    [
      'takes a JSON array in a query, as the SDK sends one',
      '["values","messages-tuple"]',
      'query',
      ['values', 'messages-tuple'],
    ],
    ['takes repeated query parameters', ['values', 'custom'], 'query', ['values', 'custom']],
    [
      'takes tasks, debug and messages',
      ['tasks', 'debug', 'messages'],
      'body',
      ['tasks', 'debug', 'messages'],
    ],
    ["takes keel for Keel's native events", 'keel', 'query', 'keel'],
  ])('%s', (_name, raw, where, expected) => {
    const selection = parseStreamMode(raw, where);
    if (expected === 'keel') expect(selection).toEqual({ native: true });
    else expect(selection.native ? 'keel' : [...selection.modes]).toEqual(expected);
  });

  it.each<[string, unknown, string]>([
    ['a LangGraph mode Keel does not speak yet', 'tools', 'unsupported_stream_mode'],
    ['an unknown mode', 'everything', 'validation_error'],
    ['keel mixed with LangGraph modes', ['keel', 'values'], 'validation_error'],
    ['a number', 3, 'validation_error'],
  ])('refuses %s with 422', (_name, raw, code) => {
    expect(() => parseStreamMode(raw, 'body')).toThrow(ApiError);
    try {
      parseStreamMode(raw, 'body');
    } catch (error) {
      expect(error).toMatchObject({ status: 422, code, param: 'stream_mode' });
    }
  });
});

describe('checkpoints of a transcript', () => {
  it('commits the input, the tool call with its results, and the answer as three steps', () => {
    expect(commitUnits(transcript)).toEqual([
      { end: 0, node: 'input', run_id: 'r1' },
      { end: 2, node: 'tools', run_id: 'r1' },
      { end: 3, node: 'agent', run_id: 'r1' },
    ]);
  });

  it('gives each step a checkpoint chained to its parent, with what runs next', () => {
    const states = threadCheckpoints('t1', transcript, { created_at: at, busy: false });
    expect(
      states.map((state) => ({
        id: state.checkpoint.checkpoint_id,
        parent: state.parent_checkpoint?.checkpoint_id ?? null,
        step: state.metadata.step,
        next: state.next,
        tasks: state.tasks.map((task) => task.name),
        messages: state.values.messages.map((message) => message.type),
      })),
    ).toEqual([
      { id: 'start', parent: null, step: -1, next: ['__start__'], tasks: [], messages: [] },
      { id: 'm1', parent: 'start', step: 0, next: ['agent'], tasks: ['agent'], messages: ['human'] },
      {
        id: 'm3',
        parent: 'm1',
        step: 1,
        next: ['agent'],
        tasks: ['agent'],
        messages: ['human', 'ai', 'tool'],
      },
      { id: 'm4', parent: 'm3', step: 2, next: [], tasks: [], messages: ['human', 'ai', 'tool', 'ai'] },
    ]);
  });

  it('shows the agent next while a run is under way', () => {
    const states = threadCheckpoints('t1', transcript.slice(0, 1), { created_at: at, busy: true });
    expect(states.at(-1)!.next).toEqual(['agent']);
  });

  it('reads the values through the step that committed a message', () => {
    expect(messagesThroughStep(transcript, 'm2')!.map((message) => message.id)).toEqual(['m1', 'm2', 'm3']);
    expect(messagesThroughStep(transcript, 'm10')).toBeUndefined();
  });
});

describe('translating Keel events into stream modes', () => {
  const run = { run_id: 'r1', thread_id: 't1', status: 'running', usage: zeroUsage } as Run;
  const events: KeelEvent[] = [
    { event: 'run.created', data: { run } },
    { event: 'run.started', data: { run } },
    { event: 'message.delta', data: { run_id: 'r1', step: 1, attempt: 1, text: 'Running.' } },
    { event: 'tool.started', data: { run_id: 'r1', tool_use_id: 'tu1', name: 'bash', input: {} } },
    {
      event: 'tool.completed',
      data: { run_id: 'r1', tool_use_id: 'tu1', name: 'bash', is_error: false, content: 'hi' },
    },
    { event: 'message.completed', data: { run_id: 'r1', message: transcript[1] as never } },
    { event: 'message.delta', data: { run_id: 'r1', step: 2, attempt: 1, text: 'It said hi.' } },
    { event: 'message.completed', data: { run_id: 'r1', message: transcript[3] as never } },
    { event: 'run.completed', data: { run: { ...run, status: 'completed' } as Run } },
  ];

  const translate = async (modes: ProtocolStreamMode[]) => {
    const translator = new ProtocolTranslator(new Set(modes), 't1', (after) =>
      Promise.resolve(transcript.slice(after ?? 0)),
    );
    const out: Array<[string, unknown]> = [];
    for (const event of events)
      for (const translated of await translator.translate(event))
        out.push([translated.event, translated.data]);
    return out;
  };

  it('values: the state after each committed step', async () => {
    const values = await translate(['values']);
    expect(values.map(([event]) => event)).toEqual(['values', 'values', 'values']);
    expect(
      values.map(([, data]) => (data as { messages: Array<{ id: string }> }).messages.map((m) => m.id)),
    ).toEqual([['m1'], ['m1', 'm2', 'm3'], ['m1', 'm2', 'm3', 'm4']]);
  });

  it('messages-tuple: text chunks, a closing chunk with the tool calls, then the tool message', async () => {
    const tuples = (await translate(['messages-tuple'])).map(([event, data]) => {
      const [message, metadata] = data as [
        { type: string; id: string; content: string; tool_calls?: unknown[] },
        { langgraph_node: string },
      ];
      return [
        event,
        message.type,
        message.id,
        message.content,
        message.tool_calls?.length,
        metadata.langgraph_node,
      ];
    });
    const first = chunkIdOf('r1', 1, 1);
    const second = chunkIdOf('r1', 2, 1);
    expect(tuples).toEqual([
      ['messages', 'AIMessageChunk', first, 'Running.', 0, 'agent'],
      ['messages', 'AIMessageChunk', first, '', 1, 'agent'],
      ['messages', 'tool', 'm3', 'hi', undefined, 'tools'],
      ['messages', 'AIMessageChunk', second, 'It said hi.', 0, 'agent'],
      ['messages', 'AIMessageChunk', second, '', 0, 'agent'],
    ]);
  });

  it("updates: each node's new messages; custom: Keel's own events", async () => {
    const out = await translate(['updates', 'custom']);
    expect(out.map(([event, data]) => [event, Object.keys(data as object)])).toEqual([
      ['custom', ['event', 'data']],
      ['custom', ['event', 'data']],
      ['updates', ['agent']],
      ['updates', ['tools']],
      ['updates', ['agent']],
    ]);
    expect(out[0]![1]).toMatchObject({ event: 'tool.started', data: { tool_use_id: 'tu1' } });
  });

  it('tasks: each node run starts with its input and ends with its writes', async () => {
    const tasks = await translate(['tasks']);
    const ai = (id: string): unknown => expect.objectContaining({ type: 'ai', id });
    expect(tasks).toEqual([
      [
        'tasks',
        {
          id: 'm1:agent',
          name: 'agent',
          input: { messages: [expect.objectContaining({ type: 'human', id: 'm1' })] },
          triggers: ['branch:to:agent'],
        },
      ],
      [
        'tasks',
        { id: 'm1:agent', name: 'agent', error: null, result: [['messages', [ai('m2')]]], interrupts: [] },
      ],
      [
        'tasks',
        {
          id: 'm2:tools',
          name: 'tools',
          input: { messages: [expect.objectContaining({ id: 'm1' }), ai('m2')] },
          triggers: ['branch:to:tools'],
        },
      ],
      [
        'tasks',
        {
          id: 'm2:tools',
          name: 'tools',
          error: null,
          result: [['messages', [expect.objectContaining({ type: 'tool', id: 'm3', tool_call_id: 'tu1' })]]],
          interrupts: [],
        },
      ],
      [
        'tasks',
        {
          id: 'm3:agent',
          name: 'agent',
          input: { messages: [expect.anything(), ai('m2'), expect.objectContaining({ id: 'm3' })] },
          triggers: ['branch:to:agent'],
        },
      ],
      [
        'tasks',
        { id: 'm3:agent', name: 'agent', error: null, result: [['messages', [ai('m4')]]], interrupts: [] },
      ],
    ]);
  });

  it('debug: checkpoints, task starts and task results with their step and time', async () => {
    const debug = (await translate(['debug'])).map(([event, data]) => {
      const { type, step, timestamp, payload } = data as {
        type: string;
        step: number;
        timestamp: string;
        payload: { id?: string; config?: { configurable: { checkpoint_id: string } } };
      };
      expect(timestamp).toBe(at);
      return [event, type, step, payload.id ?? payload.config?.configurable.checkpoint_id];
    });
    expect(debug).toEqual([
      ['debug', 'checkpoint', 0, 'm1'],
      ['debug', 'task', 1, 'm1:agent'],
      ['debug', 'task_result', 1, 'm1:agent'],
      ['debug', 'task', 1, 'm2:tools'],
      ['debug', 'task_result', 1, 'm2:tools'],
      ['debug', 'checkpoint', 1, 'm3'],
      ['debug', 'task', 2, 'm3:agent'],
      ['debug', 'task_result', 2, 'm3:agent'],
      ['debug', 'checkpoint', 2, 'm4'],
    ]);
    const checkpoints = (await translate(['checkpoints'])).map(([, data]) => data);
    const payloads = (await translate(['debug']))
      .map(([, data]) => data as { type: string; payload: unknown })
      .filter((data) => data.type === 'checkpoint')
      .map((data) => data.payload);
    expect(payloads).toEqual(checkpoints);
  });

  it('messages: metadata once per message, the AI message accumulated so far, whole tool messages', async () => {
    const out = (await translate(['messages'])).map(([event, data]) => {
      if (event === 'messages/metadata') return [event, Object.keys(data as object)];
      const message = (
        data as Array<{ type: string; id: string; content: string; tool_calls?: unknown[] }>
      )[0]!;
      return [event, message.type, message.id, message.content, message.tool_calls?.length];
    });
    const first = chunkIdOf('r1', 1, 1);
    const second = chunkIdOf('r1', 2, 1);
    expect(out).toEqual([
      ['messages/metadata', [first]],
      ['messages/partial', 'ai', first, 'Running.', 0],
      ['messages/partial', 'ai', first, 'Running.', 1],
      ['messages/metadata', ['m3']],
      ['messages/complete', 'tool', 'm3', 'hi', undefined],
      ['messages/metadata', [second]],
      ['messages/partial', 'ai', second, 'It said hi.', 0],
      ['messages/partial', 'ai', second, 'It said hi.', 0],
    ]);
  });

  it('events: astream_events v2 for the graph, its nodes, the model calls and the tools', async () => {
    const out = (await translate(['events'])).map(([event, data]) => {
      const lc = data as {
        event: string;
        name: string;
        run_id: string;
        parent_ids: string[];
        metadata: { langgraph_node?: string; langgraph_step?: number };
        data: object;
      };
      expect(event).toBe('events');
      return `${lc.event} ${lc.name} ${lc.metadata.langgraph_node ?? '-'}@${lc.metadata.langgraph_step ?? '-'} ${lc.run_id} <${lc.parent_ids.join(',')}> ${Object.keys(lc.data).join(',')}`;
    });
    expect(out).toEqual([
      'on_chain_start LangGraph -@- r1 <> input',
      'on_chain_start agent agent@1 m1:agent <r1> input',
      'on_chat_model_start ChatModel agent@1 m1:agent:model <r1,m1:agent> input',
      'on_chat_model_stream ChatModel agent@1 m1:agent:model <r1,m1:agent> chunk',
      'on_chat_model_end ChatModel agent@1 m1:agent:model <r1,m1:agent> output,input',
      'on_chain_end agent agent@1 m1:agent <r1> output,input',
      'on_chain_start tools tools@1 m2:tools <r1> input',
      'on_tool_start bash tools@1 tu1 <r1,m2:tools> input',
      'on_tool_end bash tools@1 tu1 <r1,m2:tools> output,input',
      'on_chain_end tools tools@1 m2:tools <r1> output,input',
      'on_chain_start agent agent@2 m3:agent <r1> input',
      'on_chat_model_start ChatModel agent@2 m3:agent:model <r1,m3:agent> input',
      'on_chat_model_stream ChatModel agent@2 m3:agent:model <r1,m3:agent> chunk',
      'on_chat_model_end ChatModel agent@2 m3:agent:model <r1,m3:agent> output,input',
      'on_chain_end agent agent@2 m3:agent <r1> output,input',
      'on_chain_end LangGraph -@- r1 <> output',
    ]);
    type Ids = { messages: Array<{ id: string }> };
    const events = (await translate(['events'])).map(
      ([, data]) => data as { event: string; data: { input?: Ids; output?: Ids } },
    );
    expect(events[0]!.data.input!.messages.map((m) => m.id)).toEqual(['m1']);
    expect(events[4]!.data.output).toMatchObject({
      type: 'ai',
      id: 'm2',
      tool_calls: [{ name: 'bash', id: 'tu1' }],
    });
    expect(events[8]!.data.output).toMatchObject({ type: 'tool', tool_call_id: 'tu1', content: 'hi' });
    expect(events.at(-1)!.data.output!.messages.map((m) => m.id)).toEqual(['m1', 'm2', 'm3', 'm4']);
  });

  it('several modes at once: each sends what it sends alone, in the same order', async () => {
    const modes: ProtocolStreamMode[] = [...protocolStreamModes];
    const all = await translate(modes);
    for (const mode of modes) {
      const alone = await translate([mode]);
      const names = new Set(alone.map(([event]) => event));
      const own = (event: string) =>
        mode === 'messages'
          ? event.startsWith('messages/')
          : event === (mode === 'messages-tuple' ? 'messages' : mode);
      expect(all.filter(([event]) => own(event) && names.has(event))).toEqual(alone);
    }
  });

  it('reads the transcript once, then only what was appended since', async () => {
    const reads: Array<number | undefined> = [];
    let visible = 1;
    const translator = new ProtocolTranslator(new Set(['values']), 't1', (after) => {
      reads.push(after);
      return Promise.resolve(transcript.slice(after ?? 0, visible));
    });
    const values: string[][] = [];
    for (const event of events) {
      if (event.event === 'message.completed') visible = event.data.message.id === 'm2' ? 3 : 4;
      for (const translated of await translator.translate(event))
        values.push((translated.data as { messages: Array<{ id: string }> }).messages.map((m) => m.id));
    }
    expect(values).toEqual([['m1'], ['m1', 'm2', 'm3'], ['m1', 'm2', 'm3', 'm4']]);
    expect(reads).toEqual([undefined, 1, 3]);
  });

  it('tells a failed run as an error event, whatever the modes', async () => {
    const translator = new ProtocolTranslator(new Set(['updates']), 't1', () => Promise.resolve([]));
    const failed = {
      ...run,
      status: 'failed',
      error: { type: 'ModelRequestInvalid' as const, message: 'the model failed' },
    } as Run;
    expect(await translator.translate({ event: 'run.failed', data: { run: failed } })).toEqual([
      { event: 'error', data: { error: 'ModelRequestInvalid', message: 'the model failed' } },
    ]);
  });
});
