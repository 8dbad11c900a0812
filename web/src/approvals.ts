/**
 * Tool calls waiting for a person, and deciding them. Today they come from Keel's approval
 * endpoints and `approval.*` custom events; LangGraph interrupts (`command.resume`) can replace
 * this one module without touching the cards that show them.
 */
import { keelRequest, segment, type Connection } from './keel-api';

export interface PendingDecision {
  id: string;
  tool: string;
  args: Record<string, unknown>;
  /** When the call is refused as "not approved in time". */
  expiresAt: string;
}

/** Approve (with `input`, the arguments a person edited, run in place of the model's), or deny. */
export type Decision =
  { kind: 'approve'; input?: Record<string, unknown> } | { kind: 'deny'; reason: string };

/**
 * Arguments a person edited, as JSON: the object to run the tool with, or what is wrong with the
 * text in a sentence.
 */
export function editedArguments(text: string): { args: Record<string, unknown> } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: `The arguments are not valid JSON: ${(error as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { problem: 'The arguments must be a JSON object, like {"command": "ls"}.' };
  return { args: value as Record<string, unknown> };
}

interface KeelApproval {
  approval_id: string;
  tool: string;
  input: Record<string, unknown>;
  expires_at: string;
}

const fromKeel = (approval: KeelApproval): PendingDecision => ({
  id: approval.approval_id,
  tool: approval.tool,
  args: approval.input,
  expiresAt: approval.expires_at,
});

export async function pendingDecisions(connection: Connection, threadId: string): Promise<PendingDecision[]> {
  const found = await keelRequest<KeelApproval[]>(
    connection,
    'GET',
    `/threads/${segment(threadId)}/approvals`,
  );
  return found.map(fromKeel);
}

/** The decision asked for by an `approval.requested` custom event. */
export const decisionRequested = (data: KeelApproval): PendingDecision => fromKeel(data);

export async function decide(
  connection: Connection,
  threadId: string,
  id: string,
  decision: Decision,
): Promise<void> {
  await keelRequest(connection, 'POST', `/threads/${segment(threadId)}/approvals/${segment(id)}`, {
    decision: decision.kind,
    ...(decision.kind === 'approve' && decision.input !== undefined ? { input: decision.input } : {}),
    ...(decision.kind === 'deny' && decision.reason.trim() !== '' ? { reason: decision.reason.trim() } : {}),
  });
}
