/**
 * The parameters Keel's MCP agent server checks (each bad one answers -32602 naming the field),
 * and Keel's errors in JSON-RPC's codes.
 */
import type { Logger } from 'pino';
import { z } from 'zod';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { DecideApprovalInput, PendingApproval } from '../../common/approvals';
import { idPattern, limits } from '../../common/limits';
import { fromTemporal } from '../errors';

export const callArguments = z.strictObject({
  message: z.string().min(1).max(limits.maxInputChars),
  thread_id: z.string().max(limits.maxIdChars).regex(idPattern, 'not a thread id').optional(),
});
export const callParams = z.looseObject({
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()).optional(),
  task: z.looseObject({ ttl: z.number().optional() }).optional(),
});
export const taskParams = z.looseObject({ taskId: z.string().max(500) });
/** Anything: the handler checks params itself, so that bad ones answer -32602 naming the field. */
export const anyParams = z.unknown();
export const listParams = z.looseObject({ cursor: z.string().max(100).optional() });
const inputResponse = z.looseObject({
  action: z.enum(['accept', 'decline', 'cancel']),
  content: z.record(z.string(), z.unknown()).optional(),
});
export const updateParams = taskParams.extend({
  inputResponses: z.record(z.string(), inputResponse),
});

export function parseParams<S extends z.ZodType>(schema: S, params: unknown, what: string): z.infer<S> {
  const parsed = schema.safeParse(params ?? {});
  if (parsed.success) return parsed.data;
  const message = parsed.error.issues
    .map((issue) => `${[what, ...issue.path].join('.')}: ${issue.message}`)
    .join('; ');
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, message);
}

export const shown = (text: string): string => (text.length > 100 ? `${text.slice(0, 100)}…` : text);
export const taskNotFound = (taskId: string) =>
  new ProtocolError(ProtocolErrorCode.InvalidParams, `task ${shown(taskId)} not found`);

/**
 * Keel's errors in JSON-RPC's codes: what the caller sent wrong (unknown, conflicting, invalid)
 * is -32602, Temporal out of reach or anything else -32603 (with `data.code` saying which).
 */
export function toProtocolError(error: unknown, logger: Logger): ProtocolError {
  if (error instanceof ProtocolError) return error;
  const api = fromTemporal(error);
  if (api !== undefined && api.status < 500)
    return new ProtocolError(ProtocolErrorCode.InvalidParams, api.message, {
      status: api.status,
      code: api.code,
    });
  if (api !== undefined)
    return new ProtocolError(ProtocolErrorCode.InternalError, api.message, {
      status: api.status,
      code: api.code,
    });
  logger.error({ err: error }, 'MCP request failed');
  return new ProtocolError(ProtocolErrorCode.InternalError, 'internal error');
}

/** A decision for `approval` from an elicitation-shaped answer (action, and a form's content). */
export function decisionOf(
  approval: PendingApproval,
  answer: z.infer<typeof inputResponse>,
): DecideApprovalInput {
  const content = answer.content ?? {};
  const reason = typeof content.reason === 'string' && content.reason !== '' ? content.reason : undefined;
  const decision = answer.action === 'accept' ? (content.decision ?? 'approve') : 'deny';
  const id = approval.approval_id;
  if (decision === 'deny')
    return { approval_id: id, decision: 'deny', reason: reason ?? `${answer.action}ed over MCP` };
  if (decision === 'approve') return { approval_id: id, decision: 'approve' };
  if (decision !== 'edit')
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `inputResponses.${id}.content.decision: must be approve, edit or deny`,
    );
  let input: unknown = content.input;
  try {
    if (typeof input === 'string') input = JSON.parse(input);
  } catch {
    input = undefined;
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `inputResponses.${id}.content.input: with edit, the tool's arguments as a JSON object`,
    );
  return { approval_id: id, decision: 'approve', input: input as Record<string, unknown> };
}
