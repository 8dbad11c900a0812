/**
 * A fake Anthropic model like a real one in what it costs (issue 37, decision 0425): answers of
 * varying length by turn, five sub-agents at once when told "spawn five", children that answer
 * at length. The budget-ceiling test and benchmark both bill against it.
 */
import { randomUUID } from 'node:crypto';
import type { FakeRequest, Reply } from './anthropic-server';

/** Answers of varying length, by turn: short, long, middling, very long. */
export const answerWords = [40, 700, 150, 2_000];

export const words = (count: number, seed: string): string =>
  Array.from({ length: count }, (_, index) => `${seed}${index}`).join(' ');

const textOf = (content: FakeRequest['messages'][number]['content']): string =>
  typeof content === 'string'
    ? content
    : content.map((block) => (block.type === 'text' ? String(block.text) : '')).join('\n');

/** The text of a request's first message: a sub-agent's task. */
export const firstText = (request: FakeRequest): string => textOf(request.messages[0]!.content);

/**
 * A parent told to "spawn five" asks for five sub-agents at once, each of which answers with
 * 3,000 words; "at length" gets 2,000; any other turn a length from `answerWords`, by how many
 * answers the conversation already holds.
 */
export const costlyResponder = (request: FakeRequest): Reply => {
  const last = request.messages.at(-1)!;
  if (Array.isArray(last.content) && last.content.some((block) => block.type === 'tool_result'))
    return { kind: 'message', content: [{ type: 'text', text: 'All five reported.' }] };
  const lastText = textOf(last.content);
  if (lastText.startsWith('spawn five'))
    return {
      kind: 'message',
      content: [1, 2, 3, 4, 5].map((n) => ({
        type: 'tool_use' as const,
        id: `toolu_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
        name: 'spawn_agent',
        input: { task: `sub-task ${n}: write at length` },
      })),
    };
  if (lastText.startsWith('at length'))
    return { kind: 'message', content: [{ type: 'text', text: words(2_000, 'long') }] };
  if (firstText(request).startsWith('sub-task'))
    return { kind: 'message', content: [{ type: 'text', text: words(3_000, 'child') }] };
  const turn = request.messages.filter((message) => message.role === 'assistant').length;
  return { kind: 'message', content: [{ type: 'text', text: words(answerWords[turn % 4]!, `t${turn}w`) }] };
};
