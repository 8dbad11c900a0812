/**
 * The OpenAI-compatible provider (OpenAI, vLLM, LM Studio, Ollama's `/v1`): the official `openai`
 * package, Chat Completions with streaming and tools, its own retries off (Temporal owns them),
 * and the shared stall watchdog on bytes.
 */
import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import type { ApplicationFailure } from '@temporalio/common';
import { failure } from '../errors';
import type { ModelClient, ModelReply, ModelRequest, TokenUsage } from './client';
import { connectionFailure, mapHttpFailure, stallFailure, type ProviderLabel } from './http-errors';
import {
  assistantContent,
  stopReasonOf,
  toChatMessages,
  toChatTools,
  type StreamedCall,
} from './openai-messages';
import { watchForStalls } from './stall-watch';

export interface OpenAIOptions {
  apiKey: string;
  /** @default https://api.openai.com/v1 */
  baseURL?: string;
  /** Silence after which the call is abandoned and retried. @default 90000 */
  stallTimeoutMs?: number;
  /** How failures name the server and its key. */
  label?: ProviderLabel;
}

const openaiLabel: ProviderLabel = { name: 'the OpenAI-compatible server', keyHint: 'OPENAI_API_KEY' };

export function mapOpenAIError(
  error: unknown,
  label: ProviderLabel,
  target: string,
): ApplicationFailure | undefined {
  if (error instanceof OpenAI.APIConnectionError) return connectionFailure(label, target, error);
  if (!(error instanceof OpenAI.APIError)) return undefined;
  const apiError = error as InstanceType<typeof OpenAI.APIError>;
  const body = apiError.error as { message?: unknown } | undefined;
  const message = typeof body?.message === 'string' ? body.message : apiError.message;
  const status = apiError.status;
  // A mid-stream `error` chunk has no status: the server failed after it started answering.
  return mapHttpFailure(label, status ?? 500, message, apiError.headers);
}

export class OpenAIModel implements ModelClient {
  readonly #options: OpenAIOptions;
  readonly #stallTimeoutMs: number;
  readonly #label: ProviderLabel;

  constructor(options: OpenAIOptions) {
    this.#options = options;
    this.#stallTimeoutMs = options.stallTimeoutMs ?? 90_000;
    this.#label = options.label ?? openaiLabel;
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    const watch = watchForStalls(request.signal, this.#stallTimeoutMs);
    const client = new OpenAI({
      apiKey: this.#options.apiKey,
      ...(this.#options.baseURL === undefined ? {} : { baseURL: this.#options.baseURL }),
      maxRetries: 0,
      fetch: watch.fetch,
    });
    try {
      const stream = await client.chat.completions.create(
        {
          model: request.model,
          messages: toChatMessages(request.system, request.messages),
          max_completion_tokens: request.maxTokens,
          stream: true,
          stream_options: { include_usage: true },
          ...(request.tools.length === 0 ? {} : { tools: toChatTools(request.tools) }),
        },
        { signal: watch.signal },
      );
      let text = '';
      let model = request.model;
      let finishReason: string | null | undefined;
      let usage: OpenAI.CompletionUsage | undefined;
      const calls: StreamedCall[] = [];
      for await (const chunk of stream) {
        if (chunk.model) model = chunk.model;
        if (chunk.usage) usage = chunk.usage;
        const choice = chunk.choices[0];
        if (choice === undefined) continue;
        const delta = choice.delta;
        const piece = delta.content ?? delta.refusal ?? '';
        if (piece !== '') {
          text += piece;
          request.onTextDelta?.(piece);
        }
        // A call arrives as fragments keyed by `index`: the id and name once, the arguments in pieces.
        for (const fragment of delta.tool_calls ?? []) {
          const call = (calls[fragment.index] ??= { id: '', name: '', arguments: '' });
          if (fragment.id) call.id = fragment.id;
          if (fragment.function?.name) call.name += fragment.function.name;
          if (fragment.function?.arguments) call.arguments += fragment.function.arguments;
        }
        if (choice.finish_reason) finishReason = choice.finish_reason;
      }
      // The SDK ends an aborted stream quietly; a stream cut before its finish_reason is no answer.
      if (watch.signal.aborted) throw watch.signal.reason;
      if (finishReason === undefined)
        throw failure('ModelUnavailable', `${this.#label.name} ended the stream before a finish_reason`);
      const complete = calls
        .filter((call) => call !== undefined)
        .map((call) => (call.id === '' ? { ...call, id: `call_${randomUUID()}` } : call));
      const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
      const tokens: TokenUsage = {
        input_tokens: Math.max(0, (usage?.prompt_tokens ?? 0) - cached),
        output_tokens: usage?.completion_tokens ?? 0,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: cached,
      };
      return {
        content: assistantContent(text, complete),
        stop_reason: stopReasonOf(finishReason, complete.length > 0),
        usage: tokens,
        model,
      };
    } catch (error) {
      if (request.signal.aborted) throw request.signal.reason;
      if (watch.stalled()) throw stallFailure(this.#label, this.#stallTimeoutMs);
      throw mapOpenAIError(error, this.#label, client.baseURL) ?? error;
    } finally {
      watch.dispose();
    }
  }
}
