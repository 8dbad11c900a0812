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

export type Decision = { kind: 'approve' } | { kind: 'deny'; reason: string };

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
    ...(decision.kind === 'deny' && decision.reason.trim() !== '' ? { reason: decision.reason.trim() } : {}),
  });
}
