/** Keel's failures as A2A's and JSON-RPC's own error codes. */
import { JsonRpcTransportError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import type { Logger } from 'pino';
import { fromTemporal } from '../errors';

/** At most 100 characters of what a caller sent, for an error message. */
export const shown = (text: string): string => (text.length > 100 ? `${text.slice(0, 100)}…` : text);

/** JSON-RPC's -32602, for params the transport parsed but Keel cannot take. */
export const invalidParams = (message: string): JsonRpcTransportError =>
  new JsonRpcTransportError({ jsonrpc: '2.0', id: null, error: { code: -32602, message } });

export const taskNotFound = (id: string) => new TaskNotFoundError(`task ${shown(id)} not found`);

/** Keel's errors in A2A's codes: the caller's mistakes -32602, Temporal out of reach -32603. */
export function toA2AError(error: unknown, logger: Logger): Error {
  if (error instanceof Error && 'toErrorInfo' in error) return error;
  const api = fromTemporal(error);
  if (api !== undefined && api.status < 500) return invalidParams(api.message);
  if (api !== undefined)
    return new JsonRpcTransportError({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32603, message: api.message, data: { code: api.code } },
    });
  logger.error({ err: error }, 'A2A request failed');
  return new JsonRpcTransportError({
    jsonrpc: '2.0',
    id: null,
    error: { code: -32603, message: 'internal error' },
  });
}
