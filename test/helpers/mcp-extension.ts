import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
} from '@modelcontextprotocol/client';

/** How the tests frame a 2026-07-28 request of MCP's Tasks extension. */
export interface McpExtensionRequest {
  /** The API's base URL; the request goes to its `/mcp`. */
  base: string;
  method: string;
  params: Record<string, unknown>;
  id: number;
  /** The client's name in `_meta`, so a log tells one test's client from another's. */
  clientName: string;
  /** Extra headers (an `authorization`). */
  headers?: Record<string, string>;
  /** Whether the client declares the Tasks extension in its capabilities. */
  declaresTasks?: boolean;
}

/**
 * Posts a request of MCP's Tasks extension framed as the SDK's v2 client frames its own (the
 * `_meta` envelope, `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`): the v2 client has no
 * runtime for the extension's `resultType: "task"`, so these go as its bytes would.
 */
export function postMcpExtension(request: McpExtensionRequest): Promise<Response> {
  const { method, params } = request;
  const name = method === 'tools/call' ? params.name : params.taskId;
  return fetch(`${request.base}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...request.headers,
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: request.id,
      method,
      params: {
        ...params,
        _meta: {
          [PROTOCOL_VERSION_META_KEY]: '2026-07-28',
          [CLIENT_INFO_META_KEY]: { name: request.clientName, version: '1.0.0' },
          [CLIENT_CAPABILITIES_META_KEY]:
            (request.declaresTasks ?? true) ? { extensions: { 'io.modelcontextprotocol/tasks': {} } } : {},
        },
      },
    }),
  });
}
