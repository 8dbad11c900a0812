/**
 * A local, protocol-faithful Ollama: `POST /api/chat` answering NDJSON (one JSON object a line,
 * the last with `done: true`, `done_reason` and eval counts) or one JSON object, with scripted
 * replies and injected faults. Errors are `{"error": "…"}`, as a status or as a line mid-stream.
 * Like the real server it refuses tools for a model without tool support and answers an unknown
 * model with 404. Ollama does not check the tool-call rule, so this fake records violations
 * without rejecting them.
 */
import type { ServerResponse } from 'node:http';
import {
  type ChatFake,
  type ChatReply,
  type ChatResponder,
  startChatFake,
  streamText,
  toolUsingChatReply,
} from './chat-fake';
import { piecesOf } from './fake-http-server';

export interface OllamaMessageParam {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  tool_calls?: Array<{ function: { name: string; arguments: Record<string, unknown> } }>;
  tool_name?: string;
}

export interface OllamaRequestBody {
  model: string;
  messages: OllamaMessageParam[];
  stream?: boolean;
  tools?: Array<{ type: 'function'; function: { name: string } }>;
  options?: { num_predict?: number };
}

export type FakeOllama = ChatFake<OllamaRequestBody>;

function sendError(
  response: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
) {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
  response.end(JSON.stringify({ error: message }));
}

function ollamaToolRuleViolation(messages: readonly OllamaMessageParam[]): string | undefined {
  for (const [index, message] of messages.entries()) {
    if (message.role !== 'tool') continue;
    let start = index;
    while (start > 0 && messages[start - 1]!.role === 'tool') start--;
    const asker = messages[start - 1];
    const names = new Set(
      (asker?.role === 'assistant' ? (asker.tool_calls ?? []) : []).map((call) => call.function.name),
    );
    if (!names.has(message.tool_name ?? ''))
      return `messages.${index}: tool result for ${message.tool_name} answers no call`;
  }
  return undefined;
}

function frame(
  body: OllamaRequestBody,
  message: Record<string, unknown>,
  done: boolean,
  extra: Record<string, unknown> = {},
) {
  return {
    model: body.model,
    created_at: new Date().toISOString(),
    message: { role: 'assistant', content: '', ...message },
    done,
    ...extra,
  };
}

function finalFields(body: OllamaRequestBody, reply: Extract<ChatReply, { kind: 'message' }>) {
  return {
    done_reason: reply.finish_reason ?? 'stop',
    total_duration: 1_000_000,
    load_duration: 1_000,
    prompt_eval_count: reply.usage?.prompt_tokens ?? Math.ceil(JSON.stringify(body.messages).length / 4),
    prompt_eval_duration: 1_000,
    eval_count: reply.usage?.completion_tokens ?? Math.max(1, piecesOf(reply.text ?? '').length),
    eval_duration: 1_000,
  };
}

const callsOf = (reply: Extract<ChatReply, { kind: 'message' }>) =>
  (reply.tool_calls ?? []).map((call) => ({ function: { name: call.name, arguments: call.arguments } }));

async function stream(
  response: ServerResponse,
  body: OllamaRequestBody,
  reply: Extract<ChatReply, { kind: 'message' | 'stream-error' | 'stall' }>,
  isOpen: () => boolean,
) {
  response.writeHead(200, { 'content-type': 'application/x-ndjson' });
  const send = (data: unknown) => response.write(`${JSON.stringify(data)}\n`);
  await streamText(reply, isOpen, (piece) => send(frame(body, { content: piece }, false)));
  if (reply.kind === 'stall') return;
  if (reply.kind === 'stream-error') {
    send({ error: reply.message });
    response.end();
    return;
  }
  // Ollama parses a model's tool calls whole and sends them in one frame.
  const calls = callsOf(reply);
  if (calls.length > 0) send(frame(body, { tool_calls: calls }, false));
  send(frame(body, {}, true, finalFields(body, reply)));
  response.end();
}

export const toolUsingOllamaResponder: ChatResponder<OllamaRequestBody> = (body) =>
  toolUsingChatReply(body.messages);

export function startFakeOllama(
  options: {
    models?: string[];
    toollessModels?: string[];
    responder?: ChatResponder<OllamaRequestBody>;
  } = {},
): Promise<FakeOllama> {
  const toolless = new Set(options.toollessModels ?? []);
  const models = new Set([...(options.models ?? ['llama3.2', 'qwen3:8b']), ...toolless]);
  return startChatFake<OllamaRequestBody>({
    path: '/api/chat',
    responder: options.responder ?? (() => ({ kind: 'message', text: 'Hello from the fake Ollama.' })),
    reject: (response, status, message) => sendError(response, status, message),
    admit: ({ body, response, violation }) => {
      if (typeof body.model !== 'string' || body.model === '') {
        sendError(response, 400, 'model is required');
        return false;
      }
      if (!models.has(body.model)) {
        sendError(response, 404, `model "${body.model}" not found, try pulling it first`);
        return false;
      }
      if (toolless.has(body.model) && (body.tools?.length ?? 0) > 0) {
        sendError(response, 400, `registry.ollama.ai/library/${body.model} does not support tools`);
        return false;
      }
      const broken = ollamaToolRuleViolation(body.messages ?? []);
      if (broken !== undefined) violation(broken);
      return true;
    },
    streams: (body) => body.stream !== false,
    error: ({ response }, reply) => sendError(response, reply.status, reply.message, reply.headers),
    json: ({ body, response }, reply) => {
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
      const calls = callsOf(reply);
      response.end(
        JSON.stringify(
          frame(
            body,
            { content: reply.text ?? '', ...(calls.length === 0 ? {} : { tool_calls: calls }) },
            true,
            finalFields(body, reply),
          ),
        ),
      );
    },
    stream: ({ body, response, isOpen }, reply) => stream(response, body, reply, isOpen),
  });
}
