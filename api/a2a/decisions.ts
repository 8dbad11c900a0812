/**
 * What a follow-up message on a task that waits for approval decides: A2A has no approval
 * method, so the answer travels as a message (decision 0445).
 */
import type { Message } from '@a2a-js/sdk';
import type { DecideApprovalInput, PendingApproval } from '../../common/approvals';
import { invalidParams, shown } from './errors';

/** The text a message carries, its text parts joined. */
export const textOf = (message: Message): string =>
  message.parts
    .map((part) => (part.content?.$case === 'text' ? part.content.value : ''))
    .filter((text) => text !== '')
    .join('\n');

/** A data part's object, the first one the message carries. */
export function dataOf(message: Message): Record<string, unknown> | undefined {
  for (const part of message.parts)
    if (
      part.content?.$case === 'data' &&
      typeof part.content.value === 'object' &&
      part.content.value !== null
    )
      return part.content.value as Record<string, unknown>;
  return undefined;
}

/**
 * The decisions a follow-up message makes for the task's pending approvals: a data part
 * `{decision, input?, reason?, approval_id?}`, or text `approve`/`yes` or `deny`/`no` (a reason
 * may follow a colon). One answer without `approval_id` decides every pending approval.
 */
export function decisionsOf(message: Message, pending: readonly PendingApproval[]): DecideApprovalInput[] {
  const data = dataOf(message);
  const text = textOf(message).trim();
  let decision: unknown = data?.decision;
  let reason: unknown = data?.reason;
  if (data === undefined) {
    const [word = '', ...rest] = text.split(':');
    decision = { approve: 'approve', yes: 'approve', deny: 'deny', no: 'deny' }[word.trim().toLowerCase()];
    reason = rest.join(':').trim() || undefined;
  }
  if (decision !== 'approve' && decision !== 'edit' && decision !== 'deny')
    throw invalidParams(
      'the task waits for approval: answer "approve", "deny: <reason>", or a data part {"decision": "approve" | "edit" | "deny", "input": {…}, "reason": "…"}',
    );
  const only = data?.approval_id;
  const chosen = only === undefined ? pending : pending.filter(({ approval_id }) => approval_id === only);
  if (chosen.length === 0) throw invalidParams(`the task has no pending approval ${shown(String(only))}`);
  return chosen.map(({ approval_id }) => {
    if (decision === 'deny')
      return {
        approval_id,
        decision: 'deny' as const,
        reason: typeof reason === 'string' && reason !== '' ? reason : 'denied over A2A',
      };
    if (decision === 'approve') return { approval_id, decision: 'approve' as const };
    const input = data?.input;
    if (typeof input !== 'object' || input === null || Array.isArray(input))
      throw invalidParams("with edit, input must be the tool's arguments as a JSON object");
    return { approval_id, decision: 'approve' as const, input: input as Record<string, unknown> };
  });
}
