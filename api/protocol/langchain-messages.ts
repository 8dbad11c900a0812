/**
 * LangChain-shaped messages as a view of Keel's canonical (Anthropic-shaped) transcript, for
 * LangGraph clients (docs/decisions/0090-langchain-messages-as-a-view.md). Pure: the same
 * transcript always gives the same messages and ids.
 *
 * - a user message's text blocks become one `human` message; each `tool_result` block becomes a
 *   `tool` message (with the name of the tool the previous assistant message called);
 * - an assistant message becomes one `ai` message: its text joined as `content`, its `tool_use`
 *   blocks as `tool_calls`;
 * - the first message made from canonical message `mN` has id `mN`, later ones `mN.1`, `mN.2`…
 */
import type { AssistantMessage, Message, ToolUseBlock, UserMessage } from '../../common/transcript';
import { textOf, toolUsesOf } from '../../common/transcript';

export interface LangChainToolCall {
  name: string;
  args: Record<string, unknown>;
  id: string;
  type: 'tool_call';
}

/** The token counts LangChain reports on an AI message. */
export interface LangChainUsage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

interface Common {
  id: string;
  content: string | Array<{ type: 'text'; text: string }>;
  additional_kwargs: Record<string, never>;
  response_metadata: Record<string, unknown>;
  name: string | null;
}

export interface HumanMessage extends Common {
  type: 'human';
}

export interface AiMessage extends Common {
  type: 'ai';
  content: string;
  tool_calls: LangChainToolCall[];
  invalid_tool_calls: [];
  /** Keel counts tokens per run, not per message: null in the transcript view. */
  usage_metadata: LangChainUsage | null;
}

export interface ToolMessage extends Common {
  type: 'tool';
  content: string;
  tool_call_id: string;
  status: 'success' | 'error';
}

export type LangChainMessage = HumanMessage | AiMessage | ToolMessage;

const derivedId = (id: string, index: number): string => (index === 0 ? id : `${id}.${index}`);

export function toAiMessage(message: AssistantMessage): AiMessage {
  return {
    type: 'ai',
    id: message.id,
    content: textOf(message.content),
    tool_calls: toolUsesOf(message.content).map(toToolCall),
    invalid_tool_calls: [],
    usage_metadata: null,
    additional_kwargs: {},
    response_metadata: {
      model_name: message.model,
      stop_reason: message.stop_reason,
      // The partial answer of a stopped run, flagged so a client can tell it from a whole one
      // (decision 0370).
      ...(message.stopped === true ? { stopped: true } : {}),
    },
    name: null,
  };
}

export function toToolCall(block: ToolUseBlock): LangChainToolCall {
  return { name: block.name, args: block.input, id: block.id, type: 'tool_call' };
}

function fromUserMessage(message: UserMessage, toolNames: ReadonlyMap<string, string>): LangChainMessage[] {
  const views: LangChainMessage[] = [];
  for (const block of message.content) {
    if (block.type !== 'tool_result') continue;
    views.push({
      type: 'tool',
      id: derivedId(message.id, views.length),
      content: block.content,
      tool_call_id: block.tool_use_id,
      status: block.is_error === true ? 'error' : 'success',
      additional_kwargs: {},
      response_metadata: {},
      name: toolNames.get(block.tool_use_id) ?? null,
    });
  }
  const texts = message.content.filter((block) => block.type === 'text');
  if (texts.length > 0) {
    views.push({
      type: 'human',
      id: derivedId(message.id, views.length),
      // One block reads back as the string it was sent as.
      content: texts.length === 1 ? texts[0]!.text : texts.map(({ text }) => ({ type: 'text', text })),
      additional_kwargs: {},
      response_metadata: {},
      name: null,
    });
  }
  return views;
}

/** The LangChain view of a transcript (or of any contiguous part of one). */
export function toLangChainMessages(messages: readonly Message[]): LangChainMessage[] {
  const toolNames = new Map<string, string>();
  return messages.flatMap((message) => toLangChainMessage(message, toolNames));
}

/**
 * The LangChain view of one message of a transcript: `toolNames` holds the tools the messages
 * before it called (by tool use id), and this message's calls are added to it.
 */
export function toLangChainMessage(message: Message, toolNames: Map<string, string>): LangChainMessage[] {
  if (message.role === 'user') return fromUserMessage(message, toolNames);
  for (const use of toolUsesOf(message.content)) toolNames.set(use.id, use.name);
  return [toAiMessage(message)];
}
