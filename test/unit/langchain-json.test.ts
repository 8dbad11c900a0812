import type { Message } from '../../common/transcript';
import { LangChainJson } from '../../api/protocol/langchain-json';
import { toLangChainMessages } from '../../api/protocol/langchain-messages';

const meta = (id: string) => ({ id, run_id: 'r1', created_at: '2026-01-01T00:00:00.000Z' });
const user = (id: string, text: string): Message => ({
  ...meta(id),
  role: 'user',
  content: [{ type: 'text', text }],
});
const answer = (id: string, text: string): Message => ({
  ...meta(id),
  role: 'assistant',
  content: [{ type: 'text', text }],
  model: 'scripted:demo',
  stop_reason: 'end_turn',
});
const toolCall = (id: string, toolUseId: string): Message => ({
  ...meta(id),
  role: 'assistant',
  content: [{ type: 'tool_use', id: toolUseId, name: 'bash', input: { command: 'ls "a\\b"' } }],
  model: 'scripted:demo',
  stop_reason: 'tool_use',
});
const toolResult = (id: string, toolUseId: string): Message => ({
  ...meta(id),
  role: 'user',
  content: [{ type: 'tool_result', tool_use_id: toolUseId, content: 'a\nb "c" ü 漢' }],
});

/** A conversation of `turns` turns, every third one calling a tool, message objects made once. */
function conversation(turns: number): Message[] {
  const messages: Message[] = [];
  let sequence = 0;
  const id = () => `m${++sequence}`;
  for (let turn = 1; turn <= turns; turn++) {
    messages.push(user(id(), `turn ${turn}: hello "there" ${'x'.repeat(turn)}`));
    if (turn % 3 === 0) {
      messages.push(toolCall(id(), `toolu_${turn}`));
      messages.push(toolResult(id(), `toolu_${turn}`));
    }
    messages.push(answer(id(), `You said: turn ${turn}`));
  }
  return messages;
}

const whole = (messages: readonly Message[]) => JSON.stringify(toLangChainMessages(messages));

describe('the LangChain view as JSON, kept per thread', () => {
  it('is byte for byte the whole view at every length as a thread grows, a tool call and its result split across reads', () => {
    const json = new LangChainJson();
    const all = conversation(60);
    // Lengths that cut between a tool call and its result too (the tool message names the tool).
    for (let length = 0; length <= all.length; length += 1 + (length % 4))
      expect(json.of('t1', all.slice(0, length))).toBe(whole(all.slice(0, length)));
    expect(json.of('t1', all)).toBe(whole(all));
  });

  it('starts over when the transcript is not the one it kept (compacted, forked): other message objects', () => {
    const json = new LangChainJson();
    const all = conversation(12);
    expect(json.of('t1', all)).toBe(whole(all));
    // The same ids, other contents: a rewritten transcript the reader read anew.
    const rewritten = conversation(12).map((message) =>
      message.role === 'user' && message.content[0]?.type === 'text'
        ? { ...message, content: [{ type: 'text' as const, text: `rewritten ${message.id}` }] }
        : message,
    );
    expect(json.of('t1', rewritten)).toBe(whole(rewritten));
    // Shorter than what was kept (a fork back to an earlier message).
    expect(json.of('t1', rewritten.slice(0, 5))).toBe(whole(rewritten.slice(0, 5)));
    expect(json.of('t1', [])).toBe('[]');
  });

  it('keeps threads apart, and stays exact when its limit forgets the least recently read', () => {
    const json = new LangChainJson({ keptChars: 6_000 });
    const a = conversation(20);
    const b = conversation(25);
    for (let length = 1; length <= 40; length++) {
      expect(json.of('a', a.slice(0, Math.min(length, a.length)))).toBe(
        whole(a.slice(0, Math.min(length, a.length))),
      );
      expect(json.of('b', b.slice(0, length))).toBe(whole(b.slice(0, length)));
    }
  });
});
