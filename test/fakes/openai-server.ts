/**
 * A local, protocol-faithful OpenAI Chat Completions API: `POST /v1/chat/completions` answering
 * JSON or SSE (`data:` chunks ending `data: [DONE]`, tool-call deltas split across chunks by
 * `index`), with scripted replies and injected faults. Like the real API it rejects a history
 * that breaks the tool-call rule, and, like Ollama's `/v1`, a tool list for a tool-less model.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import {
  type ChatFake,
  type ChatReply,
  type ChatResponder,
  startChatFake,
  streamText,
  thirdsOf,
  toolUsingChatReply,
} from './chat-fake';
import { piecesOf } from './fake-http-server';

export interface OpenAIToolCallParam {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface OpenAIMessageParam {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content?: string | null;
  tool_calls?: OpenAIToolCallParam[];
  tool_call_id?: string;
}

export interface OpenAIRequestBody {
  model: string;
  messages: OpenAIMessageParam[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  tools?: Array<{ type: 'function'; function: { name: string; description?: string; parameters?: unknown } }>;
  max_completion_tokens?: number;
  max_tokens?: number;
}

export type FakeOpenAI = ChatFake<OpenAIRequestBody>;

function sendError(
  response: ServerResponse,
  status: number,
  message: string,
  extra: Partial<Record<'type' | 'code', string>> = {},
  headers: Record<string, string> = {},
) {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(
    JSON.stringify({
      error: { message, type: extra.type ?? 'invalid_request_error', param: null, code: extra.code ?? null },
    }),
  );
}

/** OpenAI's wording for the tool-call rule, as its API answers it. */
export function openaiToolRuleViolation(messages: readonly OpenAIMessageParam[]): string | undefined {
  for (const [index, message] of messages.entries()) {
    if (message.role === 'tool') {
      let start = index;
      while (start > 0 && messages[start - 1]!.role === 'tool') start--;
      const asker = messages[start - 1];
      const ids = new Set(asker?.role === 'assistant' ? (asker.tool_calls ?? []).map((call) => call.id) : []);
      if (!ids.has(message.tool_call_id ?? ''))
        return `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.`;
    }
    if (message.role === 'assistant' && (message.tool_calls?.length ?? 0) > 0) {
      const answered = new Set<string>();
      for (let next = index + 1; messages[next]?.role === 'tool'; next++)
        answered.add(messages[next]!.tool_call_id ?? '');
      const missing = message.tool_calls!.map((call) => call.id).filter((id) => !answered.has(id));
      if (missing.length > 0)
        return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(', ')}`;
    }
  }
  return undefined;
}

function finishReasonOf(reply: Extract<ChatReply, { kind: 'message' }>): string {
  return reply.finish_reason ?? ((reply.tool_calls?.length ?? 0) > 0 ? 'tool_calls' : 'stop');
}

function argumentsText(argumentsValue: Record<string, unknown> | string): string {
  return typeof argumentsValue === 'string' ? argumentsValue : JSON.stringify(argumentsValue);
}

function usageOf(body: OpenAIRequestBody, reply: Extract<ChatReply, { kind: 'message' }> | undefined) {
  const prompt = reply?.usage?.prompt_tokens ?? Math.ceil(JSON.stringify(body.messages).length / 4);
  const completion = reply?.usage?.completion_tokens ?? Math.max(1, piecesOf(reply?.text ?? '').length);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: reply?.usage?.cached_tokens ?? 0 },
  };
}

async function stream(
  response: ServerResponse,
  body: OpenAIRequestBody,
  reply: Extract<ChatReply, { kind: 'message' | 'stream-error' | 'stall' }>,
  isOpen: () => boolean,
) {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const id = `chatcmpl-${randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  const send = (data: unknown) => response.write(`data: ${JSON.stringify(data)}\n\n`);
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    send({
      id,
      object: 'chat.completion.chunk',
      created,
      model: body.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });
  chunk({ role: 'assistant', content: '' });
  await streamText(reply, isOpen, (piece) => chunk({ content: piece }));
  if (reply.kind === 'stall') return;
  if (reply.kind === 'stream-error') {
    send({ error: { message: reply.message, type: reply.type ?? 'server_error', param: null, code: null } });
    response.end();
    return;
  }
  for (const [index, call] of (reply.tool_calls ?? []).entries()) {
    // The id and name come once; the arguments follow in fragments keyed by the same index.
    chunk({
      tool_calls: [
        {
          index,
          id: `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
          type: 'function',
          function: { name: call.name, arguments: '' },
        },
      ],
    });
    for (const fragment of thirdsOf(argumentsText(call.arguments))) {
      chunk({ tool_calls: [{ index, function: { arguments: fragment } }] });
    }
  }
  chunk({}, finishReasonOf(reply));
  if (body.stream_options?.include_usage === true) {
    send({
      id,
      object: 'chat.completion.chunk',
      created,
      model: body.model,
      choices: [],
      usage: usageOf(body, reply),
    });
  }
  response.write('data: [DONE]\n\n');
  response.end();
}

function json(
  response: ServerResponse,
  body: OpenAIRequestBody,
  reply: Extract<ChatReply, { kind: 'message' }>,
) {
  const calls = (reply.tool_calls ?? []).map((call) => ({
    id: `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
    type: 'function',
    function: { name: call.name, arguments: argumentsText(call.arguments) },
  }));
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(
    JSON.stringify({
      id: `chatcmpl-${randomUUID()}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: reply.text ?? null,
            ...(calls.length === 0 ? {} : { tool_calls: calls }),
          },
          finish_reason: finishReasonOf(reply),
        },
      ],
      usage: usageOf(body, reply),
    }),
  );
}

export const toolUsingOpenAIResponder: ChatResponder<OpenAIRequestBody> = (body) =>
  toolUsingChatReply(body.messages);

export function startFakeOpenAI(
  options: { apiKey?: string; responder?: ChatResponder<OpenAIRequestBody>; toollessModels?: string[] } = {},
): Promise<FakeOpenAI> {
  const apiKey = options.apiKey ?? 'test-key';
  const toolless = new Set(options.toollessModels ?? []);
  return startChatFake<OpenAIRequestBody>({
    path: '/v1/chat/completions',
    responder: options.responder ?? (() => ({ kind: 'message', text: 'Hello from the fake OpenAI API.' })),
    reject: (response, status, message) => sendError(response, status, message),
    admit: ({ body, request, response, violation }) => {
      if (request.headers.authorization !== `Bearer ${apiKey}`) {
        sendError(response, 401, 'Incorrect API key provided.', { code: 'invalid_api_key' });
        return false;
      }
      if (typeof body.model !== 'string' || body.model === '') {
        sendError(response, 400, 'you must provide a model parameter');
        return false;
      }
      if (!Array.isArray(body.messages) || body.messages.length === 0) {
        sendError(response, 400, "Invalid 'messages': empty array. Expected an array with minimum length 1.");
        return false;
      }
      const broken = openaiToolRuleViolation(body.messages);
      if (broken !== undefined) {
        violation(broken);
        sendError(response, 400, broken);
        return false;
      }
      if (toolless.has(body.model) && (body.tools?.length ?? 0) > 0) {
        sendError(response, 400, `registry.ollama.ai/library/${body.model} does not support tools`, {
          type: 'api_error',
        });
        return false;
      }
      return true;
    },
    streams: (body) => body.stream === true,
    error: ({ response }, reply) =>
      sendError(
        response,
        reply.status,
        reply.message,
        {
          ...(reply.type === undefined ? {} : { type: reply.type }),
          ...(reply.code === undefined ? {} : { code: reply.code }),
        },
        reply.headers,
      ),
    json: ({ body, response }, reply) => json(response, body, reply),
    stream: ({ body, response, isOpen }, reply) => stream(response, body, reply, isOpen),
  });
}
