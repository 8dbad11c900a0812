/**
 * What every fake model server shares: one JSON `POST` route on a loopback port, scripted replies
 * (a queue first, then a responder), the faults of the connection itself (`hang`, `reset`), the
 * requests it got and the rule violations it saw, a way to wait for requests, and a `close` that
 * also ends open connections (a hung or streaming reply must not keep a test waiting). Each fake
 * checks requests and frames the other replies in its own server's wire format.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Replies every fake gives the same way, whatever its protocol: no answer at all. */
export type ConnectionFault =
  /** Accepts the request and never answers. */
  | { kind: 'hang' }
  /** Destroys the connection without an answer. */
  | { kind: 'reset' };

/** What every fake's replies are: a message, an HTTP error, a stream that breaks or stalls, a fault. */
export type ScriptedReply = { kind: 'message' | 'error' | 'stream-error' | 'stall' } | ConnectionFault;

/** The replies a fake answers with a stream. */
export type StreamedReply<Reply> = Extract<Reply, { kind: 'message' | 'stream-error' | 'stall' }>;

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Splits text the way a model streams it: a word at a time. */
export function piecesOf(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

export interface RequestRecord<Body, Kind extends string> {
  body: Body;
  headers: IncomingMessage['headers'];
  at: number;
  /** What was answered (after validation). */
  reply: Kind | 'invalid';
  /** When the connection closed (the client gave up, or the answer ended). */
  closedAt?: number;
}

export interface ScriptedFake<Body, Reply extends ScriptedReply> {
  url: string;
  requests: Array<RequestRecord<Body, Reply['kind']>>;
  /** Requests that broke the tool-call rule (rejected where the real server rejects them). */
  violations: string[];
  enqueue(...replies: Reply[]): void;
  setResponder(responder: (request: Body, index: number) => Reply): void;
  waitForRequests(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface Exchange<Body, Reply extends ScriptedReply> {
  body: Body;
  request: IncomingMessage;
  response: ServerResponse;
  record: RequestRecord<Body, Reply['kind']>;
  isOpen(): boolean;
  violation(description: string): void;
}

export async function startScriptedFake<Body, Reply extends ScriptedReply>(options: {
  /** How failures name the fake ("fake Anthropic got 1 of 2 requests"). */
  name: string;
  path: string;
  responder: (request: Body, index: number) => Reply;
  /** Answers a request outside `path` (404) or a body that is not JSON (400), in the server's format. */
  reject(response: ServerResponse, status: 404 | 400, request: IncomingMessage): void;
  /** Checks a request as the real server does; false when it answered it (a refusal). */
  admit(exchange: Exchange<Body, Reply>): boolean;
  /** Whether the request asks for a streamed answer (servers differ in their default). */
  streams(body: Body): boolean;
  /**
   * Other POST paths the server answers (a token count beside the messages), each with the
   * request's JSON body: not recorded in `requests`, never scripted.
   */
  routes?: Record<string, (body: unknown, request: IncomingMessage, response: ServerResponse) => void>;
  /** The next scripted reply to an admitted request, in the server's format. */
  error(exchange: Exchange<Body, Reply>, reply: Extract<Reply, { kind: 'error' }>): void;
  json(exchange: Exchange<Body, Reply>, reply: Extract<Reply, { kind: 'message' }>): void;
  stream(exchange: Exchange<Body, Reply>, reply: StreamedReply<Reply>): Promise<void>;
}): Promise<ScriptedFake<Body, Reply>> {
  const queue: Reply[] = [];
  let responder = options.responder;
  const requests: Array<RequestRecord<Body, Reply['kind']>> = [];
  const violations: string[] = [];
  const sockets = new Set<Socket>();
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const answer = async (exchange: Exchange<Body, Reply>, reply: Reply): Promise<void> => {
    switch (reply.kind) {
      case 'hang':
        return;
      case 'reset':
        exchange.request.socket.destroy();
        return;
      case 'error':
        options.error(exchange, reply as Extract<Reply, { kind: 'error' }>);
        return;
      case 'message':
        if (!options.streams(exchange.body)) {
          options.json(exchange, reply as Extract<Reply, { kind: 'message' }>);
          return;
        }
    }
    await options.stream(exchange, reply as StreamedReply<Reply>);
  };
  const server = createServer((request, response) => {
    const route = request.method === 'POST' ? options.routes?.[request.url?.split('?')[0] ?? ''] : undefined;
    if (route !== undefined) {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        try {
          route(JSON.parse(Buffer.concat(chunks).toString('utf8')), request, response);
        } catch {
          options.reject(response, 400, request);
        }
      });
      return;
    }
    if (request.method !== 'POST' || request.url?.split('?')[0] !== options.path) {
      options.reject(response, 404, request);
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let body: Body;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Body;
      } catch {
        options.reject(response, 400, request);
        return;
      }
      const record: RequestRecord<Body, Reply['kind']> = {
        body,
        headers: request.headers,
        at: Date.now(),
        reply: 'invalid',
      };
      requests.push(record);
      for (const waiter of [...waiters]) {
        if (requests.length >= waiter.count) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
      let open = true;
      response.on('close', () => {
        open = false;
        record.closedAt = Date.now();
      });
      const exchange: Exchange<Body, Reply> = {
        body,
        request,
        response,
        record,
        isOpen: () => open,
        violation: (description) => violations.push(description),
      };
      if (!options.admit(exchange)) return;
      const reply = queue.shift() ?? responder(body, requests.length - 1);
      record.reply = reply.kind;
      void answer(exchange, reply);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    violations,
    enqueue: (...replies) => queue.push(...replies),
    setResponder: (next) => {
      responder = next;
    },
    waitForRequests: (count, timeoutMs = 30_000) =>
      requests.length >= count
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            const timer = setTimeout(
              () => reject(new Error(`${options.name} got ${requests.length} of ${count} requests`)),
              timeoutMs,
            );
            waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
          }),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
