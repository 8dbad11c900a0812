import { limits } from '../../common/limits';
import { findTranscriptViolation, type ModelMessage } from '../../common/transcript';
import { compact, modelMessages } from '../../workflows/core/transcript';
import { initialState } from '../../workflows/core/state';
import type { Message } from '../../common/transcript';
import { toolRuleViolation } from '../fakes/anthropic-server';

const user = (text: string): ModelMessage => ({ role: 'user', content: [{ type: 'text', text }] });
const asks = (...ids: string[]): ModelMessage => ({
  role: 'assistant',
  content: ids.map((id) => ({ type: 'tool_use' as const, id, name: 'bash', input: {} })),
});
const answers = (...ids: string[]): ModelMessage => ({
  role: 'user',
  content: ids.map((id) => ({ type: 'tool_result' as const, tool_use_id: id, content: 'ok' })),
});

describe('the tool_use / tool_result rule', () => {
  it.each([
    [
      'a plain exchange',
      [user('hi'), { role: 'assistant', content: [{ type: 'text', text: 'hello' }] }],
      undefined,
    ],
    ['two calls answered in the next message', [user('go'), asks('a', 'b'), answers('b', 'a')], undefined],
    ['a call never answered', [user('go'), asks('a')], 'tool_use without tool_result: a'],
    [
      'a call answered only in part',
      [user('go'), asks('a', 'b'), answers('a')],
      'tool_use without tool_result: b',
    ],
    [
      'an answer two messages late',
      [user('go'), asks('a'), user('wait'), answers('a')],
      'tool_use without tool_result',
    ],
    ['an answer to no call', [user('go'), answers('z')], 'tool_result for unknown tool_use z'],
  ] as Array<[string, ModelMessage[], string | undefined]>)('%s', (_name, messages, violation) => {
    const found = findTranscriptViolation(messages);
    if (violation === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(violation);
    // The fake Anthropic API applies the same rule, independently written, with Anthropic's words.
    expect(toolRuleViolation(messages as never) === undefined).toBe(violation === undefined);
  });
});

describe('transcript compaction', () => {
  const state = initialState({
    thread_id: 't',
    metadata: {},
    config: { model: 'scripted:demo', approval: 'auto', approval_timeout_s: 300, max_steps: 50 },
    created_at: '2026-01-01T00:00:00Z',
  });
  const meta = (index: number) => ({
    id: `m${index}`,
    run_id: `r${index}`,
    created_at: '2026-01-01T00:00:00Z',
  });
  /** Appends a bash call `id` and its result of `output`, as the next two messages. */
  const pushToolCall = (transcript: Message[], id: string, output: string) => {
    transcript.push({
      ...meta(transcript.length),
      role: 'assistant',
      model: 'x',
      stop_reason: 'tool_use',
      content: [{ type: 'tool_use', id, name: 'bash', input: {} }],
    });
    transcript.push({
      ...meta(transcript.length),
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: id, content: output }],
    });
  };

  it('drops whole earlier runs from the front, never splitting a tool call from its result', () => {
    const transcript: Message[] = [];
    for (let run = 0; run < 40; run++) {
      transcript.push({
        ...meta(transcript.length),
        role: 'user',
        content: [{ type: 'text', text: `question ${run}` }],
      });
      pushToolCall(transcript, `u${run}`, 'y'.repeat(30_000));
    }
    const compacted = compact({ ...state, transcript });
    expect(JSON.stringify(compacted.transcript).length).toBeLessThanOrEqual(limits.transcriptChars);
    expect(compacted.compacted_messages % 3).toBe(0);
    expect(compacted.transcript[0]).toMatchObject({ role: 'user', content: [{ type: 'text' }] });
    const seen = modelMessages(compacted);
    expect(findTranscriptViolation(seen)).toBeUndefined();
    expect(JSON.stringify(seen[0])).toContain(`${compacted.compacted_messages} earlier messages`);
  });

  it('elides old tool outputs when a single run alone is too large', () => {
    const transcript: Message[] = [
      { ...meta(0), role: 'user', content: [{ type: 'text', text: 'one long run' }] },
    ];
    for (let step = 0; step < 30; step++) {
      pushToolCall(transcript, `u${step}`, 'z'.repeat(31_000));
    }
    const compacted = compact({ ...state, transcript });
    expect(compacted.transcript).toHaveLength(transcript.length);
    expect(JSON.stringify(compacted.transcript).length).toBeLessThanOrEqual(limits.transcriptChars);
    expect(JSON.stringify(compacted.transcript)).toContain('output elided by Keel');
    expect(findTranscriptViolation(modelMessages(compacted))).toBeUndefined();
  });
});
