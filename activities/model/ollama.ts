/**
 * The Ollama provider: the official `ollama` package against the native `/api/chat`, streamed as
 * NDJSON. Ollama's tool calls carry no ids, so Keel gives each one; results go back as
 * `role: "tool"` messages naming the tool. The shared stall watchdog guards the stream.
 */
import { randomUUID } from 'node:crypto';
import type { ApplicationFailure } from '@temporalio/common';
import { Ollama, type Message as OllamaMessage } from 'ollama';
import type { ModelMessage } from '../../common/transcript';
import type { ModelClient, ModelReply, ModelRequest } from './client';
import { connectionFailure, mapHttpFailure, stallFailure, type ProviderLabel } from './http-errors';
import { assistantContent, stopReasonOf, toChatTools, toolResultText } from './openai-messages';
import { watchForStalls } from './stall-watch';

export interface OllamaOptions {
  /** @default http://localhost:11434 */
  host: string;
  /** @default 90000 */
  stallTimeoutMs?: number;
}

const label: ProviderLabel = { name: 'Ollama', keyHint: 'OLLAMA_HOST' };

export function toOllamaMessages(system: string, messages: readonly ModelMessage[]): OllamaMessage[] {
  const out: OllamaMessage[] = system === '' ? [] : [{ role: 'system', content: system }];
  const toolNames = new Map<string, string>();
  for (const message of messages) {
    if (message.role === 'assistant') {
      const calls = message.content.flatMap((block) => {
        if (block.type !== 'tool_use') return [];
        toolNames.set(block.id, block.name);
        return [{ function: { name: block.name, arguments: block.input } }];
      });
      const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
      out.push({ role: 'assistant', content: text, ...(calls.length === 0 ? {} : { tool_calls: calls }) });
      continue;
    }
    for (const block of message.content) {
      if (block.type === 'tool_result') {
        out.push({
          role: 'tool',
          content: toolResultText(block.content, block.is_error),
          tool_name: toolNames.get(block.tool_use_id) ?? 'unknown',
        });
      }
    }
    const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n');
    if (text !== '') out.push({ role: 'user', content: text });
  }
  return out;
}

function mapOllamaError(error: unknown, host: string): ApplicationFailure {
  const status = (error as { status_code?: unknown }).status_code;
  const message = error instanceof Error ? error.message : String(error);
  if ((error as { name?: unknown }).name === 'ResponseError' && typeof status === 'number')
    return mapHttpFailure(label, status, message, undefined);
  // fetch's network failure: a TypeError, checked by name because it may come from another realm.
  if ((error as { name?: unknown }).name === 'TypeError') return connectionFailure(label, host, error);
  // An `{"error": …}` line in the middle of the stream, or a stream cut before `done`.
  return mapHttpFailure(label, 500, message, undefined);
}

export class OllamaModel implements ModelClient {
  readonly #options: OllamaOptions;
  readonly #stallTimeoutMs: number;

  constructor(options: OllamaOptions) {
    this.#options = options;
    this.#stallTimeoutMs = options.stallTimeoutMs ?? 90_000;
  }

  async complete(request: ModelRequest): Promise<ModelReply> {
    const watch = watchForStalls(request.signal, this.#stallTimeoutMs);
    const client = new Ollama({ host: this.#options.host, fetch: watch.fetch });
    try {
      const stream = await client.chat({
        model: request.model,
        messages: toOllamaMessages(request.system, request.messages),
        stream: true,
        options: { num_predict: request.maxTokens },
        ...(request.tools.length === 0 ? {} : { tools: toChatTools(request.tools) }),
      });
      let text = '';
      let model = request.model;
      let doneReason: string | undefined;
      let usage = { input: 0, output: 0 };
      const calls: Array<{ id: string; name: string; arguments: string }> = [];
      for await (const part of stream) {
        model = part.model || model;
        const piece = part.message.content;
        if (piece !== '') {
          text += piece;
          request.onTextDelta?.(piece);
        }
        for (const call of part.message.tool_calls ?? []) {
          calls.push({
            id: `call_${randomUUID()}`,
            name: call.function.name,
            arguments: JSON.stringify(call.function.arguments),
          });
        }
        if (part.done) {
          doneReason = part.done_reason;
          usage = { input: part.prompt_eval_count ?? 0, output: part.eval_count ?? 0 };
        }
      }
      return {
        content: assistantContent(text, calls),
        stop_reason: stopReasonOf(doneReason, calls.length > 0),
        usage: {
          input_tokens: usage.input,
          output_tokens: usage.output,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
        model,
      };
    } catch (error) {
      if (request.signal.aborted) throw request.signal.reason;
      if (watch.stalled()) throw stallFailure(label, this.#stallTimeoutMs);
      throw mapOllamaError(error, this.#options.host);
    } finally {
      watch.dispose();
    }
  }
}
