/**
 * `/mcp`: MCP's Streamable HTTP transport, stateless (decisions 0430, 0475), served by the
 * official SDK v2's `createMcpHandler`: 2026-07-28 requests (per-request `_meta` envelope,
 * `server/discover`) on its modern path, 2025-era ones (`initialize`, down to 2024-10-07) on its
 * stateless legacy fallback, both from one factory. Every POST gets a server of its own and
 * answers JSON; nothing lives between requests, so any API process answers any of them. It sits behind the API's own doors: the Host check against DNS
 * rebinding, the Origin check against pages elsewhere, JSON-only bodies and the tokens. The
 * transport reads the body itself, so a body that is not JSON answers JSON-RPC's -32700.
 */
import { setMaxListeners } from 'node:events';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler } from '@modelcontextprotocol/server';
import type { RunServices } from '../runs/run-submission';
import { agentServer } from './agent-server';

export interface McpRouteOptions {
  services: RunServices;
  /** How long a call that is not a task waits for its answer (`KEEL_MCP_WAIT_S`). */
  waitMs: number;
  /** Largest request body, in bytes. */
  maxBodyBytes: number;
  logger: Logger;
  stopping?: AbortSignal | undefined;
}

/**
 * A handler, not an Express route: `/mcp`'s contract is MCP's JSON-RPC schema, not the OpenAPI
 * document, which describes (and whose test compares) the LangGraph protocol's routes.
 */
export function mcpRoutes({
  services,
  waitMs,
  maxBodyBytes,
  logger,
  stopping,
}: McpRouteOptions): RequestHandler {
  // One listener per waiting request: many at once is load, not a leak (each is removed).
  if (stopping !== undefined) setMaxListeners(0, stopping);

  return (request, response, next) => {
    if (request.path !== '/mcp') {
      next();
      return;
    }
    if (request.method !== 'POST') {
      // Stateless: no stream to open with GET, no session to end with DELETE.
      response
        .status(405)
        .set('Allow', 'POST')
        .json({
          jsonrpc: '2.0',
          error: { code: -32000, message: 'Method not allowed: this MCP server is stateless; POST requests' },
          id: null,
        });
      return;
    }
    // The caller going away or the API stopping ends a wait; the run goes on.
    const waiting = new AbortController();
    const abort = (): void => waiting.abort();
    if (stopping?.aborted === true) abort();
    stopping?.addEventListener('abort', abort, { once: true });
    const signal = waiting.signal;
    // One handler per request: its factory closes over this exchange (owner, headers, signal).
    const handler = createMcpHandler(
      ({ era }) => agentServer({ services, response, waitMs, signal, logger, era }),
      {
        // 2025-era clients too, each request on its own (the SDK answers GET and DELETE 405).
        legacy: 'stateless',
        // Keel's handlers send nothing before their result, so a 2026-07-28 answer is JSON.
        maxRequestBodySize: maxBodyBytes,
        onerror: (error) => logger.debug({ err: error }, 'MCP request refused'),
      },
    );
    response.on('close', () => {
      if (!response.writableFinished) abort();
      stopping?.removeEventListener('abort', abort);
      void handler.close().catch(() => undefined);
    });
    toNodeHandler(handler)(request, response).catch(next);
  };
}
