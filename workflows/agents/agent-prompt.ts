/**
 * What the agent is asked (`AgentInput.task` or `.messages`), checked and split into the
 * transcript's start and the first run's input. Input may arrive as untyped JSON (through Nexus),
 * so every block is checked and rebuilt from its known fields.
 */
import type { AgentInput } from '../../common/agents';
import {
  findTranscriptViolation,
  type AssistantContent,
  type ModelMessage,
  type UserContent,
} from '../../common/transcript';

/**
 * Characters of earlier messages an agent may start with. They travel in the start input, the
 * thread's state and each continue-as-new input, which must all stay well under 2 MiB.
 */
export const maxEarlierChars = 200_000;

/** The prompt, ready to start a conversation. */
export interface AgentPromptParts {
  /** Messages before the first run (empty for a task). */
  earlier: ModelMessage[];
  /** The first run's input. */
  first: UserContent[];
}

type Checked<T> = T | { problem: string };
const isProblem = <T>(value: Checked<T>): value is { problem: string } =>
  typeof value === 'object' && value !== null && 'problem' in value;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function blockOf(
  block: unknown,
  role: 'user' | 'assistant',
  where: string,
): Checked<UserContent | AssistantContent> {
  if (!isRecord(block)) return { problem: `${where} is not a content block` };
  if (block.type === 'text' && typeof block.text === 'string') return { type: 'text', text: block.text };
  if (role === 'user' && block.type === 'tool_result') {
    if (typeof block.tool_use_id !== 'string' || typeof block.content !== 'string')
      return { problem: `${where}: a tool_result needs a tool_use_id and text content` };
    return {
      type: 'tool_result',
      tool_use_id: block.tool_use_id,
      content: block.content,
      ...(block.is_error === true ? { is_error: true } : {}),
    };
  }
  if (role === 'assistant' && block.type === 'tool_use') {
    if (typeof block.id !== 'string' || typeof block.name !== 'string' || !isRecord(block.input))
      return { problem: `${where}: a tool_use needs an id, a name and an input object` };
    return { type: 'tool_use', id: block.id, name: block.name, input: block.input };
  }
  return {
    problem: `${where}: a ${role} message holds text${role === 'user' ? ' and tool_result' : ' and tool_use'} blocks only`,
  };
}

function contentOf(
  content: unknown,
  role: 'user' | 'assistant',
  where: string,
): Checked<ModelMessage['content']> {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content) || content.length === 0)
    return { problem: `${where} must be text or a non-empty array of content blocks` };
  const blocks: Array<UserContent | AssistantContent> = [];
  for (const [index, block] of content.entries()) {
    const checked = blockOf(block, role, `${where}[${index}]`);
    if (isProblem(checked)) return checked;
    blocks.push(checked);
  }
  return blocks as ModelMessage['content'];
}

const isBlank = (content: ModelMessage['content']): boolean =>
  content.every((block) => block.type === 'text' && block.text.trim() === '');

function messagesOf(messages: unknown): Checked<AgentPromptParts> {
  if (!Array.isArray(messages) || messages.length === 0)
    return { problem: 'messages must be a non-empty array' };
  const checked: ModelMessage[] = [];
  for (const [index, message] of messages.entries()) {
    const where = `messages[${index}]`;
    const role = isRecord(message) ? message.role : undefined;
    if (role !== 'user' && role !== 'assistant')
      return { problem: `${where}.role must be user or assistant` };
    const expected = index % 2 === 0 ? 'user' : 'assistant';
    if (role !== expected)
      return {
        problem: `${where} must be a ${expected} message: messages alternate, starting with the user`,
      };
    const content = contentOf((message as Record<string, unknown>).content, role, `${where}.content`);
    if (isProblem(content)) return content;
    if (isBlank(content)) return { problem: `${where} is empty` };
    checked.push({ role, content } as ModelMessage);
  }
  const last = checked.at(-1)!;
  if (last.role !== 'user')
    return { problem: 'the last of messages must be a user message: it is the first run' };
  if (last.content.some((block) => block.type !== 'text'))
    return { problem: 'the last of messages must be text: it is the first run' };
  const earlier = checked.slice(0, -1);
  const violation = findTranscriptViolation(earlier);
  if (violation !== undefined) return { problem: `messages: ${violation}` };
  if (JSON.stringify(earlier).length > maxEarlierChars)
    return { problem: `messages before the last may hold at most ${maxEarlierChars} characters` };
  return { earlier, first: last.content };
}

/** The prompt's parts, or why the input asks nothing an agent can start on. */
export function promptOf(input: AgentInput): AgentPromptParts | string {
  const given = input as { task?: unknown; messages?: unknown };
  if (given.task !== undefined && given.messages !== undefined)
    return 'give either task or messages, not both';
  if (given.messages !== undefined) {
    const parts = messagesOf(given.messages);
    return isProblem(parts) ? parts.problem : parts;
  }
  if (given.task === undefined) return 'task or messages is required';
  const first = contentOf(given.task, 'user', 'task');
  if (isProblem(first)) return first.problem;
  if (isBlank(first)) return 'task is empty';
  return { earlier: [], first: first as UserContent[] };
}
