/**
 * A2A 1.0 at `/a2a/{assistant_id}` (decision 0445): the official SDK's JSON-RPC transport over
 * Keel's runs, and the agent cards — the default agent's at `/.well-known/agent-card.json`
 * (public, as discovery needs), each assistant's at `/a2a/{assistant_id}/.well-known/agent-card.json`
 * (behind the tokens, as the assistant is its owner's). Behind the API's own doors: the Host
 * check, the Origin check, JSON-only bodies and the tokens.
 */
import { setMaxListeners } from 'node:events';
import express, {
  type ErrorRequestHandler,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import type { Logger } from 'pino';
import { jsonRpcHandler } from '@a2a-js/sdk/server/express';
import type { User } from '@a2a-js/sdk/server';
import type { LiveTextSource } from '../streams/live-merge';
import { defaultAssistantId } from '../assistants/assistant-service';
import type { RunServices } from '../runs/run-submission';
import { ownerOf } from '../validate';
import { agentCardJsonOf } from './agent-card';
import { AgentHandler } from './agent-handler';

export interface A2aRouteOptions {
  services: RunServices;
  /** How long a blocking `SendMessage` waits (`KEEL_MCP_WAIT_S`, shared with MCP). */
  waitMs: number;
  maxBodyBytes: number;
  /** The API asks for tokens: the cards say so. */
  tokens: boolean;
  logger: Logger;
  stopping?: AbortSignal | undefined;
  /** Where streams read the model's text as it is written (decision 0340). */
  live?: LiveTextSource | undefined;
}

/** The card's path, as A2A's discovery appends it to an agent's URL. */
export const agentCardPath = '/.well-known/agent-card.json';

const baseOf = (request: Request): string => `${request.protocol}://${request.get('host') ?? 'localhost'}`;

/** A JSON-RPC error with no id, for what fails before a request is read. */
const rpcError = (response: Response, code: number, message: string): void => {
  response.status(200).json({ jsonrpc: '2.0', id: null, error: { code, message } });
};

/** A body that is not JSON is -32700 and one too large -32600, as JSON-RPC answers them. */
const bodyErrors: ErrorRequestHandler = (error: unknown, _request, response, next) => {
  const type = (error as { type?: unknown } | null)?.type;
  if (type === 'entity.parse.failed') rpcError(response, -32700, 'Invalid JSON payload.');
  else if (type === 'entity.too.large') rpcError(response, -32600, 'request body too large');
  else next(error);
};

/** `/a2a/{assistant_id}/.well-known/agent-card.json` and `/a2a/{assistant_id}`. */
const assistantCardPattern = /^\/a2a\/([^/]+)\/\.well-known\/agent-card\.json$/;
const interfacePattern = /^\/a2a\/([^/]+)\/?$/;

/** The assistant id a path names, or undefined for one that cannot be decoded. */
function idOf(match: RegExpExecArray): string | undefined {
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return undefined;
  }
}

/**
 * A handler, not Express routes: the A2A paths' contract is A2A's, not the OpenAPI document,
 * which describes (and whose test compares) the LangGraph protocol's routes, as `/mcp` is.
 */
export function a2aRoutes({
  services,
  waitMs,
  maxBodyBytes,
  tokens,
  logger,
  stopping,
  live,
}: A2aRouteOptions): RequestHandler {
  // One listener per waiting request: many at once is load, not a leak (each is removed).
  if (stopping !== undefined) setMaxListeners(0, stopping);
  const parseBody = express.json({ limit: maxBodyBytes });

  const serveCard = async (request: Request, response: Response, assistantId: string) => {
    const assistant = await services.assistants.get(assistantId, ownerOf(response));
    response.json(agentCardJsonOf(assistant, { base: baseOf(request), tokens }));
  };

  const serveRpc = async (request: Request, response: Response, next: NextFunction, assistantId: string) => {
    const assistant = await services.assistants.get(assistantId, ownerOf(response));
    // The caller going away or the API stopping ends a wait or a stream; the run goes on.
    const waiting = new AbortController();
    const abort = (): void => waiting.abort();
    if (stopping?.aborted === true) abort();
    stopping?.addEventListener('abort', abort, { once: true });
    response.on('close', () => {
      if (!response.writableFinished) abort();
      stopping?.removeEventListener('abort', abort);
    });
    const user: User = { isAuthenticated: tokens, userName: ownerOf(response) ?? 'local' };
    const handler = jsonRpcHandler({
      requestHandler: new AgentHandler({
        services,
        assistant,
        card: { base: baseOf(request), tokens },
        response,
        waitMs,
        signal: waiting.signal,
        logger,
        live,
      }),
      userBuilder: () => Promise.resolve(user),
    });
    // The SDK's router answers at its own root.
    request.url = '/';
    handler(request, response, next);
  };

  const methodNotAllowed = (response: Response, allow: string): void => {
    response
      .status(405)
      .set('Allow', allow)
      .json({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `use ${allow}` } });
  };

  return (request, response, next) => {
    const failed = (error: unknown): void => next(error);
    if (request.path === agentCardPath) {
      if (request.method !== 'GET') methodNotAllowed(response, 'GET');
      else serveCard(request, response, defaultAssistantId).catch(failed);
      return;
    }
    const card = assistantCardPattern.exec(request.path);
    const rpc = card === null ? interfacePattern.exec(request.path) : null;
    const match = card ?? rpc;
    if (match === null) {
      next();
      return;
    }
    const assistantId = idOf(match);
    if (assistantId === undefined) {
      next();
      return;
    }
    if (card !== null) {
      if (request.method !== 'GET') methodNotAllowed(response, 'GET');
      else serveCard(request, response, assistantId).catch(failed);
      return;
    }
    if (request.method !== 'POST') {
      methodNotAllowed(response, 'POST');
      return;
    }
    parseBody(request, response, (error?: unknown) => {
      if (error !== undefined) {
        bodyErrors(error, request, response, next);
        return;
      }
      serveRpc(request, response, next, assistantId).catch(failed);
    });
  };
}
