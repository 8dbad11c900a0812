/**
 * Tools for models that cannot take tool definitions. The tools are described in the system
 * prompt and the model writes each call as a block of its text:
 *
 *     <tool_call>{"name": "bash", "input": {"command": "ls"}}</tool_call>
 *
 * Keel parses the blocks back into canonical `tool_use` blocks, so the transcript stays the same
 * whatever the model. A malformed block earns the model a corrective message (up to
 * `maxCorrections` times within the same call); the exchange is not kept in the transcript.
 */
import { randomUUID } from 'node:crypto';
import type { ToolSchema } from '../../common/tools';
import type { AssistantContent, ModelMessage } from '../../common/transcript';
import type { ModelClient, ModelReply, ModelRequest } from './client';
import { isToolsUnsupported } from './http-errors';

const maxCorrections = 2;

export function toolPrompt(tools: readonly ToolSchema[]): string {
  const described = tools
    .map(
      (tool) => `- ${tool.name}: ${tool.description}\n  input schema: ${JSON.stringify(tool.input_schema)}`,
    )
    .join('\n');
  return [
    'You can use these tools:',
    described,
    'To use a tool, write a block like this in your answer, with the input as a JSON object:',
    '<tool_call>{"name": "<tool name>", "input": {…}}</tool_call>',
    'You may write several blocks. Then stop and wait: the results come back in <tool_result> blocks.',
    'Do not write a block when you do not need a tool.',
  ].join('\n');
}

/** Renders tool_use and tool_result blocks as the text the model was told to write and read. */
export function toTextMessages(messages: readonly ModelMessage[]): ModelMessage[] {
  return messages.map((message): ModelMessage => {
    if (message.role === 'assistant') {
      const text = message.content
        .map((block) =>
          block.type === 'text'
            ? block.text
            : `<tool_call>${JSON.stringify({ name: block.name, input: block.input })}</tool_call>`,
        )
        .join('\n');
      return { role: 'assistant', content: [{ type: 'text', text }] };
    }
    const text = message.content
      .map((block) =>
        block.type === 'text'
          ? block.text
          : `<tool_result${block.is_error === true ? ' error="true"' : ''}>${block.content}</tool_result>`,
      )
      .join('\n');
    return { role: 'user', content: [{ type: 'text', text }] };
  });
}

export type ParsedCalls = { content: AssistantContent[] } | { problem: string };

/** Splits a reply's text into text and tool_use blocks, or names what is wrong with a call. */
export function parseToolCalls(text: string, tools: readonly ToolSchema[]): ParsedCalls {
  const names = new Set(tools.map((tool) => tool.name));
  const content: AssistantContent[] = [];
  const pattern = /<tool_call>([\s\S]*?)<\/tool_call>/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    const before = text.slice(last, match.index).trim();
    if (before !== '') content.push({ type: 'text', text: before });
    last = match.index + match[0].length;
    let call: unknown;
    try {
      call = JSON.parse(match[1]!);
    } catch (error) {
      return { problem: `a <tool_call> block is not valid JSON (${(error as Error).message})` };
    }
    const { name, input } = (call ?? {}) as { name?: unknown; input?: unknown };
    if (typeof name !== 'string' || !names.has(name))
      return {
        problem: `a <tool_call> names tool ${JSON.stringify(name)}; the tools are ${[...names].join(', ')}`,
      };
    if (input === null || typeof input !== 'object' || Array.isArray(input))
      return { problem: `the <tool_call> for ${name} needs "input" as a JSON object` };
    content.push({
      type: 'tool_use',
      id: `toolu_${randomUUID()}`,
      name,
      input: input as Record<string, unknown>,
    });
  }
  const rest = text.slice(last).trim();
  if (rest.includes('<tool_call>')) return { problem: 'a <tool_call> block is not closed with </tool_call>' };
  if (rest !== '') content.push({ type: 'text', text: rest });
  return { content };
}

/** Asks `client` with the tools in the prompt, correcting malformed calls. */
export async function completeWithTextTools(client: ModelClient, request: ModelRequest): Promise<ModelReply> {
  const messages = toTextMessages(request.messages);
  const system = `${request.system}\n\n${toolPrompt(request.tools)}`;
  const usage = {
    input_tokens: 0,
    output_tokens: 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
  for (let attempt = 0; ; attempt++) {
    const reply = await client.complete({ ...request, system, messages, tools: [] });
    for (const key of Object.keys(usage) as Array<keyof typeof usage>) usage[key] += reply.usage[key];
    const text = reply.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
    const parsed = parseToolCalls(text, request.tools);
    if ('content' in parsed) {
      const called = parsed.content.some((block) => block.type === 'tool_use');
      return {
        ...reply,
        content: parsed.content,
        stop_reason: called ? 'tool_use' : reply.stop_reason,
        usage,
      };
    }
    // Out of corrections: the text stands as the answer rather than failing the run.
    if (attempt >= maxCorrections) return { ...reply, content: [{ type: 'text', text }], usage };
    messages.push(
      { role: 'assistant', content: [{ type: 'text', text }] },
      {
        role: 'user',
        content: [
          {
            type: 'text',
            text: `Your tool call could not be read: ${parsed.problem}. Write it again exactly as <tool_call>{"name": "<tool name>", "input": {…}}</tool_call>, or answer without a tool.`,
          },
        ],
      },
    );
  }
}

/**
 * Wraps a provider: models listed as tool-less, or that the server says cannot take tools, get
 * their tools through the prompt. What the server said is remembered per model for this worker.
 */
export class TextToolsFallback implements ModelClient {
  readonly #inner: ModelClient;
  readonly #toolless: Set<string>;

  constructor(inner: ModelClient, toollessModels: Iterable<string>) {
    this.#inner = inner;
    this.#toolless = new Set(toollessModels);
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    if (request.tools.length === 0) return this.#inner.complete(request);
    if (this.#toolless.has(request.model)) return completeWithTextTools(this.#inner, request);
    try {
      return await this.#inner.complete(request);
    } catch (error) {
      if (!isToolsUnsupported(error)) throw error;
      this.#toolless.add(request.model);
      return completeWithTextTools(this.#inner, request);
    }
  }
}
