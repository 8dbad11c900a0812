/**
 * A local, protocol-faithful Anthropic Messages API: `POST /v1/messages` answering JSON or SSE
 * exactly as the real API frames it, with scripted replies and injected faults. Like the real
 * API it answers a history that breaks the tool_use/tool_result rule with its own 400; every
 * such request is recorded in `violations` so tests can assert it never happened.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import {
  piecesOf,
  sleep,
  startScriptedFake,
  type ConnectionFault,
  type RequestRecord,
  type ScriptedFake,
} from './fake-http-server';

export interface FakeTextBlock {
  type: 'text';
  text: string;
}
export interface FakeToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}
export type FakeBlock = FakeTextBlock | FakeToolUseBlock;

export interface FakeRequest {
  model: string;
  max_tokens: number;
  system?: unknown;
  stream?: boolean;
  tools?: Array<{ name: string; input_schema: unknown; cache_control?: unknown }>;
  messages: Array<{ role: 'user' | 'assistant'; content: string | Array<Record<string, unknown>> }>;
}

/** What the fake does with one request. */
export type Reply =
  | {
      kind: 'message';
      content: FakeBlock[];
      stop_reason?: 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'pause_turn' | 'refusal';
      usage?: Partial<{
        input_tokens: number;
        output_tokens: number;
        cache_creation_input_tokens: number;
        cache_read_input_tokens: number;
      }>;
      /** Milliseconds between streamed text deltas. */
      tokenDelayMs?: number;
      /** Called as each text delta is written to the wire (for latency measurements). */
      onSent?: (piece: string) => void;
      /** Milliseconds before the first byte (a model that thinks). `ping` events keep the stream alive meanwhile. */
      firstTokenDelayMs?: number;
    }
  | { kind: 'error'; status: number; type: string; message: string; headers?: Record<string, string> }
  /** Streams `afterDeltas` text deltas of `content`, then an `event: error`. */
  | { kind: 'stream-error'; type: string; message: string; afterDeltas: number; content?: FakeBlock[] }
  /** Streams `afterDeltas` deltas, then goes silent forever (no pings). */
  | { kind: 'stall'; afterDeltas: number }
  | ConnectionFault;

export type Responder = (request: FakeRequest, index: number) => Reply;

export type RecordedRequest = RequestRecord<FakeRequest, Reply['kind']>;

/** What one request was billed, as the real API bills it: its input, and the output it sent. */
export interface BilledRequest {
  input_tokens: number;
  output_tokens: number;
}

/**
 * `violations`: requests the real API would have rejected for breaking the tool_use/tool_result
 * rule; `enqueue`d replies are used before the responder, first in first out. `billed`: every
 * answer the fake began (a stream that failed or stalled too), with the tokens it billed;
 * `counts`: the requests to `/v1/messages/count_tokens`, which bill nothing.
 */
export type FakeAnthropic = ScriptedFake<FakeRequest, Reply> & {
  billed: BilledRequest[];
  counts: number;
};

/** Every token the fake billed, input and output. */
export const billedTokens = (fake: FakeAnthropic): number =>
  fake.billed.reduce((sum, billed) => sum + billed.input_tokens + billed.output_tokens, 0);

/**
 * The input tokens of a request, as both the answer and `count_tokens` count them: its system
 * prompt, tools and messages, a token per four characters of their JSON (cache marks are not
 * content, and are not counted).
 */
export function inputTokensOf(body: Pick<FakeRequest, 'system' | 'tools' | 'messages'>): number {
  const content = JSON.stringify(
    [body.system ?? '', body.tools ?? [], body.messages],
    (key, value: unknown) => (key === 'cache_control' ? undefined : value),
  );
  return Math.ceil(content.length / 4);
}

/** Anthropic's wording, as its API answers it. */
export function toolRuleViolation(messages: FakeRequest['messages']): string | undefined {
  const blocks = (index: number): Array<Record<string, unknown>> => {
    const content = messages[index]?.content;
    return Array.isArray(content) ? content : [];
  };
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    if (message.role === 'assistant') {
      const uses = blocks(index)
        .filter((b) => b.type === 'tool_use')
        .map((b) => String(b.id));
      if (uses.length === 0) continue;
      const next = messages[index + 1];
      const answered = new Set(
        next?.role === 'user'
          ? blocks(index + 1)
              .filter((b) => b.type === 'tool_result')
              .map((b) => String(b.tool_use_id))
          : [],
      );
      const missing = uses.filter((id) => !answered.has(id));
      if (missing.length > 0) {
        return `messages.${index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
    } else {
      const previous = messages[index - 1];
      const asked = new Set(
        previous?.role === 'assistant'
          ? blocks(index - 1)
              .filter((b) => b.type === 'tool_use')
              .map((b) => String(b.id))
          : [],
      );
      for (const [position, block] of blocks(index).entries()) {
        if (block.type === 'tool_result' && !asked.has(String(block.tool_use_id))) {
          return `messages.${index}.content.${position}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
        }
      }
    }
  }
  return undefined;
}

function validate(body: FakeRequest): string | undefined {
  if (typeof body.model !== 'string' || body.model === '') return 'model: Field required';
  if (typeof body.max_tokens !== 'number') return 'max_tokens: Field required';
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return 'messages: at least one message is required';
  if (body.messages[0]?.role !== 'user') return 'messages: first message must use the "user" role';
  for (const [index, message] of body.messages.entries()) {
    const content = message.content;
    if (Array.isArray(content) && content.length === 0 && index !== body.messages.length - 1) {
      return `messages.${index}: all messages must have non-empty content except for the optional final assistant message`;
    }
  }
  return undefined;
}

const encoder = (response: ServerResponse) => (event: string, data: unknown) =>
  response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);

async function streamMessage(
  response: ServerResponse,
  body: FakeRequest,
  reply: Extract<Reply, { kind: 'message' | 'stream-error' | 'stall' }>,
  isOpen: () => boolean,
  bill: (billed: BilledRequest) => void,
) {
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'request-id': `req_${randomUUID()}`,
  });
  const send = encoder(response);
  const content =
    reply.kind === 'message'
      ? reply.content
      : reply.kind === 'stream-error'
        ? (reply.content ?? [{ type: 'text' as const, text: 'partial answer that will fail' }])
        : [{ type: 'text' as const, text: 'this stream goes silent' }];
  const usage = reply.kind === 'message' ? (reply.usage ?? {}) : {};
  const inputTokens = usage.input_tokens ?? inputTokensOf(body);
  // Billed from the moment the answer begins, whatever becomes of it.
  const billed: BilledRequest = { input_tokens: inputTokens, output_tokens: 0 };
  bill(billed);
  send('message_start', {
    type: 'message_start',
    message: {
      id: `msg_${randomUUID().replaceAll('-', '')}`,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: inputTokens,
        output_tokens: 1,
        cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
        cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
      },
    },
  });
  if (reply.kind === 'message' && reply.firstTokenDelayMs !== undefined) {
    const until = Date.now() + reply.firstTokenDelayMs;
    while (Date.now() < until && isOpen()) {
      send('ping', { type: 'ping' });
      await sleep(Math.min(1_000, until - Date.now()));
    }
  }
  let deltas = 0;
  const limit = reply.kind === 'message' ? Infinity : reply.afterDeltas;
  let outputTokens = 0;
  // As the real API: never more output than `max_tokens`, the answer cut where it falls.
  let cut = false;
  for (const [index, block] of content.entries()) {
    if (!isOpen()) return;
    if (block.type === 'text') {
      send('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'text', text: '' },
      });
      for (const piece of piecesOf(block.text)) {
        if (deltas >= limit) break;
        if (outputTokens >= body.max_tokens) {
          cut = true;
          break;
        }
        if (reply.kind === 'message' && reply.tokenDelayMs !== undefined) await sleep(reply.tokenDelayMs);
        if (!isOpen()) return;
        send('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'text_delta', text: piece },
        });
        if (reply.kind === 'message') reply.onSent?.(piece);
        deltas++;
        outputTokens++;
        billed.output_tokens = outputTokens;
      }
    } else {
      const json = JSON.stringify(block.input);
      if (outputTokens + Math.ceil(json.length / 4) > body.max_tokens) {
        cut = true;
        break;
      }
      send('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      // Real streams split tool input JSON across several deltas.
      const third = Math.ceil(json.length / 3);
      for (let start = 0; start < json.length; start += third) {
        send('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: json.slice(start, start + third) },
        });
      }
      outputTokens += Math.ceil(json.length / 4);
      billed.output_tokens = outputTokens;
    }
    if (deltas >= limit) break;
    send('content_block_stop', { type: 'content_block_stop', index });
    if (cut) break;
  }
  if (reply.kind === 'stream-error') {
    send('error', { type: 'error', error: { type: reply.type, message: reply.message } });
    response.end();
    return;
  }
  if (reply.kind === 'stall') return;
  billed.output_tokens = Math.min(usage.output_tokens ?? Math.max(outputTokens, 1), body.max_tokens);
  send('message_delta', {
    type: 'message_delta',
    delta: {
      stop_reason: cut
        ? 'max_tokens'
        : (reply.stop_reason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn')),
      stop_sequence: null,
    },
    usage: { output_tokens: billed.output_tokens },
  });
  send('message_stop', { type: 'message_stop' });
  response.end();
}

function jsonMessage(
  response: ServerResponse,
  body: FakeRequest,
  reply: Extract<Reply, { kind: 'message' }>,
  bill: (billed: BilledRequest) => void,
) {
  const usage = reply.usage ?? {};
  const billed = {
    input_tokens: usage.input_tokens ?? 10,
    output_tokens: Math.min(usage.output_tokens ?? 10, body.max_tokens),
  };
  bill(billed);
  response.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_${randomUUID()}` });
  response.end(
    JSON.stringify({
      id: `msg_${randomUUID().replaceAll('-', '')}`,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: reply.content,
      stop_reason:
        reply.stop_reason ?? (reply.content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn'),
      stop_sequence: null,
      usage: {
        ...billed,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    }),
  );
}

function errorResponse(
  response: ServerResponse,
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
) {
  response.writeHead(status, {
    'content-type': 'application/json',
    'request-id': `req_${randomUUID()}`,
    ...headers,
  });
  response.end(
    JSON.stringify({ type: 'error', error: { type, message }, request_id: `req_${randomUUID()}` }),
  );
}

const defaultResponder: Responder = () => ({
  kind: 'message',
  content: [{ type: 'text', text: 'Hello from the fake Anthropic API.' }],
});

export async function startFakeAnthropic(
  options: {
    apiKey?: string;
    responder?: Responder;
    /** What `count_tokens` answers, for replies whose usage is scripted. @default inputTokensOf */
    countTokens?: (body: FakeRequest) => number;
  } = {},
): Promise<FakeAnthropic> {
  const apiKey = options.apiKey ?? 'test-key';
  const billed: BilledRequest[] = [];
  const bill = (entry: BilledRequest): void => {
    billed.push(entry);
  };
  let counts = 0;
  const fake = await startScriptedFake<FakeRequest, Reply>({
    name: 'fake Anthropic',
    path: '/v1/messages',
    responder: options.responder ?? defaultResponder,
    reject: (response, status, request) =>
      status === 404
        ? errorResponse(response, 404, 'not_found_error', `Not found: ${request.method} ${request.url}`)
        : errorResponse(
            response,
            400,
            'invalid_request_error',
            'There was an issue with the format of the request body',
          ),
    admit: ({ body, request, response, violation: recordViolation }) => {
      // The real API takes the key as `x-api-key` or, as SDK 1.x sends it, a bearer token.
      const presented =
        request.headers['x-api-key'] ?? request.headers.authorization?.replace(/^Bearer /, '');
      if (presented !== apiKey) {
        errorResponse(response, 401, 'authentication_error', 'invalid x-api-key');
        return false;
      }
      const invalid = validate(body);
      if (invalid !== undefined) {
        errorResponse(response, 400, 'invalid_request_error', invalid);
        return false;
      }
      const violation = toolRuleViolation(body.messages);
      if (violation !== undefined) {
        recordViolation(violation);
        errorResponse(response, 400, 'invalid_request_error', violation);
        return false;
      }
      return true;
    },
    streams: (body) => body.stream === true,
    error: ({ response }, reply) =>
      errorResponse(response, reply.status, reply.type, reply.message, reply.headers),
    json: ({ body, response }, reply) => jsonMessage(response, body, reply, bill),
    stream: ({ body, response, isOpen }, reply) => streamMessage(response, body, reply, isOpen, bill),
    routes: {
      // Counts as the answer bills: the same system prompt, tools and messages, the same tokens.
      '/v1/messages/count_tokens': (body, request, response) => {
        const presented =
          request.headers['x-api-key'] ?? request.headers.authorization?.replace(/^Bearer /, '');
        if (presented !== apiKey) {
          errorResponse(response, 401, 'authentication_error', 'invalid x-api-key');
          return;
        }
        const count = body as FakeRequest;
        if (!Array.isArray(count.messages) || count.messages.length === 0) {
          errorResponse(response, 400, 'invalid_request_error', 'messages: at least one message is required');
          return;
        }
        counts++;
        response.writeHead(200, { 'content-type': 'application/json', 'request-id': `req_${randomUUID()}` });
        response.end(JSON.stringify({ input_tokens: (options.countTokens ?? inputTokensOf)(count) }));
      },
    },
  });
  return Object.defineProperties(fake, {
    billed: { value: billed, enumerable: true },
    counts: { get: () => counts, enumerable: true },
  }) as FakeAnthropic;
}

/**
 * A model that uses tools like a real one would: a user line `run: <command>` becomes a bash
 * tool_use (several lines, parallel calls); after tool results it answers quoting them.
 */
export const toolUsingResponder: Responder = (request) => {
  const last = request.messages.at(-1)!;
  const blocks = Array.isArray(last.content) ? last.content : [{ type: 'text', text: last.content }];
  const results = blocks.filter((block) => block.type === 'tool_result');
  if (results.length > 0) {
    const text = results
      .map(
        (block) =>
          `Result: ${typeof block.content === 'string' ? block.content : JSON.stringify(block.content)}`,
      )
      .join('\n');
    return { kind: 'message', content: [{ type: 'text', text }] };
  }
  const text = blocks.map((block) => (block.type === 'text' ? String(block.text) : '')).join('\n');
  const commands = [...text.matchAll(/^run: (.+)$/gm)].map((match) => match[1]!);
  if (commands.length === 0)
    return { kind: 'message', content: [{ type: 'text', text: `You said: ${text}` }] };
  return {
    kind: 'message',
    content: [
      { type: 'text', text: 'Running that now.' },
      ...commands.map((command) => ({
        type: 'tool_use' as const,
        id: `toolu_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
        name: 'bash',
        input: { command },
      })),
    ],
  };
};
