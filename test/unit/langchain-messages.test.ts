import type { Message } from '../../common/transcript';
import { toLangChainMessages } from '../../api/protocol/langchain-messages';

const meta = (id: string) => ({ id, run_id: 'r1', created_at: '2026-01-01T00:00:00.000Z' });
const user = (id: string, ...texts: string[]): Message => ({
  ...meta(id),
  role: 'user',
  content: texts.map((text) => ({ type: 'text', text })),
});
const assistant = (id: string, content: Extract<Message, { role: 'assistant' }>['content']): Message => ({
  ...meta(id),
  role: 'assistant',
  content,
  model: 'scripted:demo',
  stop_reason: content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn',
});
const bash = (id: string, command: string) => ({
  type: 'tool_use' as const,
  id,
  name: 'bash',
  input: { command },
});
const result = (toolUseId: string, content: string, isError = false) => ({
  type: 'tool_result' as const,
  tool_use_id: toolUseId,
  content,
  ...(isError ? { is_error: true } : {}),
});

const human = (id: string, content: unknown) => ({
  type: 'human',
  id,
  content,
  additional_kwargs: {},
  response_metadata: {},
  name: null,
});
const ai = (id: string, content: string, toolCalls: unknown[] = [], stopReason = 'end_turn') => ({
  type: 'ai',
  id,
  content,
  tool_calls: toolCalls,
  invalid_tool_calls: [],
  usage_metadata: null,
  additional_kwargs: {},
  response_metadata: { model_name: 'scripted:demo', stop_reason: stopReason },
  name: null,
});
const tool = (id: string, callId: string, content: string, status = 'success') => ({
  type: 'tool',
  id,
  content,
  tool_call_id: callId,
  status,
  additional_kwargs: {},
  response_metadata: {},
  name: 'bash',
});

describe('the LangChain view of the canonical transcript', () => {
  it.each<[string, Message[], unknown[]]>([
    [
      'a user message with one text block is a human message with string content',
      [user('m0', 'hello')],
      [human('m0', 'hello')],
    ],
    [
      'a user message with several text blocks keeps them as content blocks',
      [user('m0', 'one', 'two')],
      [
        human('m0', [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ]),
      ],
    ],
    [
      'an answer is an ai message with its text as content',
      [
        user('m0', 'hi'),
        assistant('m1', [
          { type: 'text', text: 'hel' },
          { type: 'text', text: 'lo' },
        ]),
      ],
      [human('m0', 'hi'), ai('m1', 'hello')],
    ],
    [
      'a tool call becomes tool_calls, and its result a tool message naming the tool',
      [
        user('m0', 'run: echo hi'),
        assistant('m1', [{ type: 'text', text: 'Running it.' }, bash('tu1', 'echo hi')]),
        { ...meta('m2'), role: 'user', content: [result('tu1', 'hi\n')] },
      ],
      [
        human('m0', 'run: echo hi'),
        ai(
          'm1',
          'Running it.',
          [{ name: 'bash', args: { command: 'echo hi' }, id: 'tu1', type: 'tool_call' }],
          'tool_use',
        ),
        tool('m2', 'tu1', 'hi\n'),
      ],
    ],
    [
      'parallel results are one tool message each, ids derived from their message, errors marked',
      [
        assistant('m1', [bash('a', 'true'), bash('b', 'false')]),
        { ...meta('m2'), role: 'user', content: [result('a', 'ok'), result('b', 'exit 1', true)] },
      ],
      [
        ai(
          'm1',
          '',
          [
            { name: 'bash', args: { command: 'true' }, id: 'a', type: 'tool_call' },
            { name: 'bash', args: { command: 'false' }, id: 'b', type: 'tool_call' },
          ],
          'tool_use',
        ),
        tool('m2', 'a', 'ok'),
        tool('m2.1', 'b', 'exit 1', 'error'),
      ],
    ],
    [
      'text beside tool results follows them as a human message',
      [
        assistant('m1', [bash('a', 'true')]),
        { ...meta('m2'), role: 'user', content: [result('a', 'ok'), { type: 'text', text: 'and then?' }] },
      ],
      [
        ai('m1', '', [{ name: 'bash', args: { command: 'true' }, id: 'a', type: 'tool_call' }], 'tool_use'),
        tool('m2', 'a', 'ok'),
        human('m2.1', 'and then?'),
      ],
    ],
    [
      'a result whose call was compacted away has no tool name',
      [{ ...meta('m9'), role: 'user', content: [result('gone', 'ok')] }],
      [{ ...tool('m9', 'gone', 'ok'), name: null }],
    ],
  ])('%s', (_name, transcript, expected) => {
    expect(toLangChainMessages(transcript)).toEqual(expected);
  });

  it('gives every message a unique id', () => {
    const transcript: Message[] = [
      user('m0', 'go'),
      assistant('m1', [bash('a', 'x'), bash('b', 'y'), bash('c', 'z')]),
      { ...meta('m2'), role: 'user', content: [result('a', '1'), result('b', '2'), result('c', '3')] },
      assistant('m3', [{ type: 'text', text: 'done' }]),
    ];
    const ids = toLangChainMessages(transcript).map((message) => message.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
