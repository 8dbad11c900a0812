/**
 * The Anthropic provider: the real SDK, streaming, with its own retries off (Temporal owns
 * them). A stream that goes silent for `stallTimeoutMs` is aborted and retried.
 */
import Anthropic from '@anthropic-ai/sdk';
import type { AssistantContent, ModelMessage, StopReason } from '../../common/transcript';
import { failure } from '../errors';
import { mapAnthropicError } from './anthropic-errors';
import type { CountRequest, ModelClient, ModelReply, ModelRequest } from './client';
import { watchForStalls } from './stall-watch';

export interface AnthropicOptions {
  apiKey: string;
  baseURL?: string;
  /** Silence (no stream event, not even `ping`) after which the call is abandoned. @default 90000 */
  stallTimeoutMs?: number;
}

/** Merges consecutive same-role messages, which the API would otherwise merge for us or reject. */
export function toAnthropicMessages(messages: readonly ModelMessage[]): Anthropic.MessageParam[] {
  const merged: Anthropic.MessageParam[] = [];
  for (const message of messages) {
    const previous = merged.at(-1);
    const content = message.content as Anthropic.MessageParam['content'] & unknown[];
    if (previous !== undefined && previous.role === message.role && Array.isArray(previous.content)) {
      previous.content = [...previous.content, ...content] as typeof previous.content;
    } else {
      merged.push({ role: message.role, content: [...content] } as Anthropic.MessageParam);
    }
  }
  return merged;
}

const stopReasons: ReadonlySet<string> = new Set([
  'end_turn',
  'tool_use',
  'max_tokens',
  'stop_sequence',
  'pause_turn',
  'refusal',
]);

/**
 * Marks the last block of the previous turn as a cache breakpoint, so the stable prefix (system,
 * tools and every earlier turn) is written once and read by the next call. With the system and
 * tools breakpoints that makes three of the four the API allows.
 */
export function withHistoryBreakpoint(messages: Anthropic.MessageParam[]): Anthropic.MessageParam[] {
  const previous = messages.at(-2);
  if (previous === undefined || !Array.isArray(previous.content) || previous.content.length === 0)
    return messages;
  const blocks = [...previous.content];
  blocks[blocks.length - 1] = {
    ...blocks.at(-1)!,
    cache_control: { type: 'ephemeral' },
  } as (typeof blocks)[number];
  return messages.map((message) =>
    message === previous ? ({ ...previous, content: blocks } as Anthropic.MessageParam) : message,
  );
}

export class AnthropicModel implements ModelClient {
  readonly #options: AnthropicOptions;
  readonly #stallTimeoutMs: number;

  constructor(options: AnthropicOptions) {
    this.#options = options;
    this.#stallTimeoutMs = options.stallTimeoutMs ?? 90_000;
  }

  #client(watchedFetch: typeof fetch): Anthropic {
    return new Anthropic({
      apiKey: this.#options.apiKey,
      ...(this.#options.baseURL === undefined ? {} : { baseURL: this.#options.baseURL }),
      maxRetries: 0,
      fetch: watchedFetch,
    });
  }

  readonly reportsAnswerStart = true;

  /** The Messages API's own count (`POST /v1/messages/count_tokens`), which bills nothing. */
  async countInputTokens(request: CountRequest): Promise<number> {
    try {
      const tools = request.tools.map((tool) => ({ ...tool }));
      const counted = await this.#client(fetch).messages.countTokens(
        {
          model: request.model,
          system: [{ type: 'text', text: request.system }],
          messages: toAnthropicMessages(request.messages),
          ...(tools.length === 0 ? {} : { tools }),
        },
        { signal: request.signal },
      );
      return counted.input_tokens;
    } catch (error) {
      if (request.signal.aborted) throw request.signal.reason;
      throw mapAnthropicError(error) ?? error;
    }
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    const watch = watchForStalls(request.signal, this.#stallTimeoutMs);
    try {
      const tools = request.tools.map((tool, index) =>
        index === request.tools.length - 1
          ? { ...tool, cache_control: { type: 'ephemeral' as const } }
          : tool,
      );
      const stream = this.#client(watch.fetch).messages.stream(
        {
          model: request.model,
          max_tokens: request.maxTokens,
          system: [{ type: 'text', text: request.system, cache_control: { type: 'ephemeral' } }],
          messages: withHistoryBreakpoint(toAnthropicMessages(request.messages)),
          ...(tools.length === 0 ? {} : { tools }),
        },
        { signal: watch.signal },
      );
      stream.on('text', (delta) => request.onTextDelta?.(delta));
      stream.on('streamEvent', (event) => {
        if (event.type === 'message_start') request.onAnswerStarted?.();
      });
      const message = await stream.finalMessage();
      return {
        content: message.content.flatMap((block): AssistantContent[] => {
          if (block.type === 'text') return [{ type: 'text' as const, text: block.text }];
          if (block.type === 'tool_use') {
            return [
              {
                type: 'tool_use' as const,
                id: block.id,
                name: block.name,
                input: block.input as Record<string, unknown>,
              },
            ];
          }
          return [];
        }),
        stop_reason: (stopReasons.has(message.stop_reason ?? '')
          ? message.stop_reason
          : 'end_turn') as StopReason,
        usage: {
          input_tokens: message.usage.input_tokens,
          output_tokens: message.usage.output_tokens,
          cache_creation_input_tokens: message.usage.cache_creation_input_tokens ?? 0,
          cache_read_input_tokens: message.usage.cache_read_input_tokens ?? 0,
        },
        model: message.model,
      };
    } catch (error) {
      if (request.signal.aborted) throw request.signal.reason;
      if (watch.stalled())
        throw failure(
          'ModelStreamStalled',
          `no data from Anthropic for ${this.#stallTimeoutMs / 1000} s; retrying`,
        );
      throw mapAnthropicError(error) ?? error;
    } finally {
      watch.dispose();
    }
  }
}
