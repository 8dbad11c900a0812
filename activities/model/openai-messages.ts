/**
 * Canonical transcript ↔ Chat Completions. A `tool_use` block becomes an entry of the assistant
 * message's `tool_calls`; each `tool_result` becomes a `role: "tool"` message right after it, so
 * the tool rule the API enforces holds; user text follows the tool messages.
 */
import type OpenAI from 'openai';
import type { ToolSchema } from '../../common/tools';
import type { AssistantContent, ModelMessage, StopReason } from '../../common/transcript';

type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** A failed tool's output is marked so the model can tell it from a success. */
export function toolResultText(content: string, isError: boolean | undefined): string {
  return isError === true ? `Error: ${content}` : content;
}

export function toChatMessages(system: string, messages: readonly ModelMessage[]): ChatMessage[] {
  const chat: ChatMessage[] = system === '' ? [] : [{ role: 'system', content: system }];
  for (const message of messages) {
    if (message.role === 'assistant') {
      const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
      const calls = message.content.flatMap((block) =>
        block.type === 'tool_use'
          ? [
              {
                id: block.id,
                type: 'function' as const,
                function: { name: block.name, arguments: JSON.stringify(block.input) },
              },
            ]
          : [],
      );
      chat.push({
        role: 'assistant',
        content: text === '' && calls.length > 0 ? null : text,
        ...(calls.length === 0 ? {} : { tool_calls: calls }),
      });
      continue;
    }
    for (const block of message.content) {
      if (block.type === 'tool_result')
        chat.push({
          role: 'tool',
          tool_call_id: block.tool_use_id,
          content: toolResultText(block.content, block.is_error),
        });
    }
    const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
    if (text !== '') chat.push({ role: 'user', content: text });
  }
  return chat;
}

export function toChatTools(
  tools: readonly ToolSchema[],
): OpenAI.Chat.Completions.ChatCompletionFunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.input_schema },
  }));
}

/** Parses a call's argument string; a model that wrote broken JSON gets told by the tool's validation. */
export function parseArguments(raw: string): Record<string, unknown> {
  if (raw.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // Falls through: the raw text is kept so the tool's input check names what was wrong.
  }
  return { invalid_arguments: raw };
}

/** `finish_reason` → canonical stop reason; tool calls decide even when a server says `stop`. */
export function stopReasonOf(finishReason: string | null | undefined, hasToolCalls: boolean): StopReason {
  if (hasToolCalls) return 'tool_use';
  switch (finishReason) {
    case 'length':
      return 'max_tokens';
    case 'content_filter':
      return 'refusal';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    default:
      return 'end_turn';
  }
}

export interface StreamedCall {
  id: string;
  name: string;
  arguments: string;
}

export function assistantContent(text: string, calls: readonly StreamedCall[]): AssistantContent[] {
  return [
    ...(text === '' ? [] : [{ type: 'text' as const, text }]),
    ...calls.map((call) => ({
      type: 'tool_use' as const,
      id: call.id,
      name: call.name,
      input: parseArguments(call.arguments),
    })),
  ];
}
