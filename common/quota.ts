/**
 * Owner quotas (issue 37, decision 0440): what an owner may spend per day and per month, and how
 * many runs may be under way at once, across all their threads. One entity workflow per owner
 * (`quotaWorkflow`, id `quotaWorkflowId(scope)`) is the ledger: each run asks it for a slot and a
 * share of what is left before its first model call, and settles the share with what it was
 * billed when it ends. Defined once here, for the API and the workflows.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

/** The operator's quota for each owner (`KEEL_QUOTA_*`); every field optional: no limit. */
export interface QuotaLimits {
  /** Dollars an owner may spend per UTC day. */
  day_usd?: number;
  /** Dollars an owner may spend per UTC month. */
  month_usd?: number;
  /** Runs an owner may have under way (queued or running) at once. */
  concurrent_runs?: number;
  /**
   * Seconds after which a run's reservation that was never settled (its thread deleted mid-run)
   * is given up: its slot is freed and its whole share counted as spent.
   */
  lease_s?: number;
}

/**
 * A run's claim on its owner's quota, carried by its input and kept on the run: admitted, with at
 * most this much to spend (sub-agents included); no `cost_usd` without a spend quota. The run's
 * key in its ledger is `quotaKey(thread workflow id, run id)`, and its ledger its thread's owner's.
 */
export interface RunQuota {
  cost_usd?: number;
  /**
   * The ledger that admitted the run, when it is not its thread's owner's: a workflow caller's
   * (`callerQuotaWorkflowId`). The run settles with it.
   */
  ledger?: string;
}

export const quotaKey = (workflowId: string, runId: string): string => `${workflowId}/${runId}`;

export interface AdmitRunInput {
  key: string;
  /** The limits the API is configured with now: the ledger keeps the latest. */
  limits: QuotaLimits;
}

export type QuotaRefusalReason = 'concurrency' | 'quota_exceeded';

export type Admission =
  | { admitted: true; cost_usd?: number }
  | { admitted: false; reason: QuotaRefusalReason; retry_after_s: number; message: string };

export interface SettleRunInput {
  key: string;
  /** What the run was billed, or may have been (its sub-agents' unreported shares included). */
  billed_usd: number;
}

/** One window of spend, as the owner reads it. */
export interface QuotaWindow {
  /** `2026-11-27` for a day, `2026-11` for a month (UTC). */
  window: string;
  spent_usd: number;
  /** Shares given to runs under way, not yet settled. */
  reserved_usd: number;
  limit_usd?: number;
  /** limit − spent − reserved, never below 0; absent without a limit. */
  left_usd?: number;
  resets_at: string;
}

/** `GET /quota`: the caller's quota and where it stands. */
export interface QuotaView {
  day: QuotaWindow;
  month: QuotaWindow;
  runs: { active: number; limit?: number };
}

export const admitRunUpdate = defineUpdate<Admission, [AdmitRunInput]>('admitRun');
export const settleRunSignal = defineSignal<[SettleRunInput]>('settleRun');
export const getQuotaQuery = defineQuery<QuotaView, [QuotaLimits]>('getQuota');

/** The ledger of the owner whose thread ids carry `scope` (none: the install's single owner). */
export const quotaWorkflowId = (scope: string | undefined): string =>
  scope === undefined ? 'quota' : `quota~${scope}`;

/**
 * The ledger of a workflow caller (decision 0480): agents started by `startAgent` or through the
 * Nexus door are admitted against the quota of the workflow they report to, or that asked for them.
 */
export const callerQuotaWorkflowId = (callerWorkflowId: string): string => `quota-caller~${callerWorkflowId}`;

/** What a workflow asks of the `admitQuotaRun` activity: a run's key in the ledger named. */
export interface AdmitQuotaRunInput {
  /** The ledger's workflow id (`quotaWorkflowId` or `callerQuotaWorkflowId`). */
  ledger: string;
  key: string;
}

/** A refusal at a workflow door, as the run it refused keeps it (`SubmitInput.quota_refused`). */
export interface QuotaRefusal {
  reason: QuotaRefusalReason;
  retry_after_s: number;
  message: string;
}

/**
 * The activity's answer: admitted, with the claim the run carries (none without a quota
 * configured on the worker), or refused.
 */
export type QuotaRunAdmission = { admitted: true; quota?: RunQuota } | ({ admitted: false } & QuotaRefusal);

/** Whether any quota is configured. */
export const hasQuota = (limits: QuotaLimits): boolean =>
  limits.day_usd !== undefined || limits.month_usd !== undefined || limits.concurrent_runs !== undefined;
