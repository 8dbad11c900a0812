/** Human approvals as every side sees them: a pending approval and a decision on one. */

export const ApprovalDecision = { approve: 'approve', deny: 'deny' } as const;
export type ApprovalDecision = (typeof ApprovalDecision)[keyof typeof ApprovalDecision];

/** A tool call waiting for a human, as `getPendingApprovals` and `GET /threads/:id/approvals` list it. */
export interface PendingApproval {
  approval_id: string;
  run_id: string;
  tool_use_id: string;
  tool: string;
  input: Record<string, unknown>;
  requested_at: string;
  /** When the call is answered "not approved in time" and the run ends `approval_timeout`. */
  expires_at: string;
}

export interface DecideApprovalInput {
  approval_id: string;
  decision: ApprovalDecision;
  /** A denial's reason is shown to the model in the tool's error result. */
  reason?: string;
  /** With `approve`: the tool runs with these arguments instead of the model's (an edit). */
  input?: Record<string, unknown>;
}

/** New budgets; `null` removes a limit, an absent key leaves it as it is. */
export interface UpdateLimitsInput {
  max_tokens?: number | null;
  max_cost_usd?: number | null;
}
