/**
 * What the fake OpenAI-compatible and Ollama servers share: scripted replies and injected faults
 * in one vocabulary (the HTTP plumbing and request recording are fake-http-server.ts'). Each fake
 * frames the replies in its own server's wire format.
 */
import type { ServerResponse } from 'node:http';
import {
  piecesOf,
  sleep,
  startScriptedFake,
  type ConnectionFault,
  type Exchange,
  type StreamedReply,
  type RequestRecord,
  type ScriptedFake,
} from './fake-http-server';

export interface FakeToolCall {
  name: string;
  /** An object, or raw text (to play a model that writes broken JSON). */
  arguments: Record<string, unknown> | string;
}

export type ChatReply =
  | {
      kind: 'message';
      text?: string;
      tool_calls?: FakeToolCall[];
      /** What the server reports; derived from the content when absent. */
      finish_reason?: string;
      usage?: { prompt_tokens?: number; completion_tokens?: number; cached_tokens?: number };
      /** Milliseconds between streamed text pieces. */
      tokenDelayMs?: number;
    }
  | {
      kind: 'error';
      status: number;
      message: string;
      type?: string;
      code?: string;
      headers?: Record<string, string>;
    }
  /** Streams `afterDeltas` text pieces, then the server's in-stream error. */
  | { kind: 'stream-error'; message: string; type?: string; afterDeltas: number }
  /** Streams `afterDeltas` pieces, then goes silent forever. */
  | { kind: 'stall'; afterDeltas: number }
  | ConnectionFault;

export type ChatRecord<Body> = RequestRecord<Body, ChatReply['kind']>;

export type ChatResponder<Body> = (request: Body, index: number) => ChatReply;

export type ChatFake<Body> = ScriptedFake<Body, ChatReply>;

export type ChatExchange<Body> = Exchange<Body, ChatReply>;

/** Splits a string in three, the way servers stream tool-call arguments. */
export function thirdsOf(text: string): string[] {
  const third = Math.max(1, Math.ceil(text.length / 3));
  const parts: string[] = [];
  for (let start = 0; start < text.length; start += third) parts.push(text.slice(start, start + third));
  return parts;
}

/**
 * Streams a reply's text a piece at a time through `send`, as far as the fault allows (`stall`
 * and `stream-error` stop after `afterDeltas` pieces); returns false when the client went away.
 */
export async function streamText(
  reply: Extract<ChatReply, { kind: 'message' | 'stream-error' | 'stall' }>,
  isOpen: () => boolean,
  send: (piece: string) => void,
): Promise<boolean> {
  const text =
    reply.kind === 'message'
      ? (reply.text ?? '')
      : reply.kind === 'stall'
        ? 'this stream goes silent'
        : 'partial answer that will fail';
  const limit = reply.kind === 'message' ? Infinity : reply.afterDeltas;
  let sent = 0;
  for (const piece of piecesOf(text)) {
    if (sent >= limit || !isOpen()) break;
    if (reply.kind === 'message' && reply.tokenDelayMs !== undefined) await sleep(reply.tokenDelayMs);
    send(piece);
    sent++;
  }
  return isOpen();
}

export function startChatFake<Body>(options: {
  path: string;
  responder: ChatResponder<Body>;
  /** Answers a request outside `path`, or a body that is not JSON. */
  reject(response: ServerResponse, status: number, message: string): void;
  admit(exchange: ChatExchange<Body>): boolean;
  streams(body: Body): boolean;
  error(exchange: ChatExchange<Body>, reply: Extract<ChatReply, { kind: 'error' }>): void;
  json(exchange: ChatExchange<Body>, reply: Extract<ChatReply, { kind: 'message' }>): void;
  stream(exchange: ChatExchange<Body>, reply: StreamedReply<ChatReply>): Promise<void>;
}): Promise<ChatFake<Body>> {
  return startScriptedFake({
    name: 'fake server',
    path: options.path,
    responder: options.responder,
    reject: (response, status, request) =>
      options.reject(
        response,
        status,
        status === 404 ? `404 page not found: ${request.method} ${request.url}` : 'invalid JSON body',
      ),
    admit: options.admit,
    streams: options.streams,
    error: options.error,
    json: options.json,
    stream: options.stream,
  });
}

/**
 * A model that uses tools like a real one: a user line `run: <command>` becomes a bash call
 * (several lines, parallel calls); after tool results it answers quoting them. Works on any
 * chat-shaped history (`role: "tool"` messages carry the results).
 */
export function toolUsingChatReply(messages: Array<{ role: string; content?: unknown }>): ChatReply {
  const trailingResults: string[] = [];
  for (let index = messages.length - 1; index >= 0 && messages[index]!.role === 'tool'; index--) {
    trailingResults.unshift(String(messages[index]!.content));
  }
  if (trailingResults.length > 0)
    return { kind: 'message', text: trailingResults.map((result) => `Result: ${result}`).join('\n') };
  const last = messages.at(-1);
  const text = typeof last?.content === 'string' ? last.content : '';
  const commands = [...text.matchAll(/^run: (.+)$/gm)].map((match) => match[1]!);
  if (commands.length === 0) return { kind: 'message', text: `You said: ${text}` };
  return {
    kind: 'message',
    text: 'Running that now.',
    tool_calls: commands.map((command) => ({ name: 'bash', arguments: { command } })),
  };
}
