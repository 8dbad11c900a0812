/**
 * What a thread's budget and its owner's quota say, in a line each (decisions 0425, 0440): what
 * was spent, what sub-agents or runs under way hold, what is left.
 */
import type { QuotaView, QuotaWindow } from '../common/quota';
import type { Run } from '../common/run';
import type { ThreadBudget } from '../common/thread';

const dollars = (value: number): string => `$${value.toFixed(4)}`;

/** "spent 1,234 tokens $0.0120 · reserved 0 tokens $0.0000 · left 8,766 tokens $0.0880". */
export function budgetLine(budget: ThreadBudget): string {
  const tokens = budget.left.tokens !== undefined;
  const cost = budget.left.cost_usd !== undefined;
  const amount = (value: { tokens?: number; cost_usd?: number }): string =>
    [
      ...(tokens ? [`${(value.tokens ?? 0).toLocaleString('en-US')} tokens`] : []),
      ...(cost ? [dollars(value.cost_usd ?? 0)] : []),
    ].join(' ');
  return `spent ${amount(budget.spent)} · reserved ${amount(budget.reserved)} · left ${amount(budget.left)}`;
}

const windowText = (name: string, window: QuotaWindow): string | undefined =>
  window.limit_usd === undefined
    ? undefined
    : `${name} ${dollars(window.spent_usd)} of ${dollars(window.limit_usd)} (reserved ${dollars(window.reserved_usd)}, left ${dollars(window.left_usd ?? 0)})`;

/** "today $0.0120 of $1.0000 (reserved …, left …); month …; runs 1 of 4", or undefined without a quota. */
export function quotaLine(quota: QuotaView): string | undefined {
  const parts = [
    windowText('today', quota.day),
    windowText('month', quota.month),
    quota.runs.limit === undefined ? undefined : `runs ${quota.runs.active} of ${quota.runs.limit}`,
  ].filter((part) => part !== undefined);
  return parts.length === 0 ? undefined : parts.join('; ');
}

/** Reasons whose error message says which limit stopped the run and what it needed. */
const explained: ReadonlySet<string> = new Set(['budget_exceeded', 'quota_exceeded']);

/** "(run failed: quota_exceeded — the run's share of its owner's quota is …)". */
export function endedLine(run: Pick<Run, 'status' | 'status_reason' | 'error'>): string {
  const reason = run.status_reason === undefined ? '' : `: ${run.status_reason}`;
  const why =
    run.status_reason !== undefined && explained.has(run.status_reason) && run.error !== undefined
      ? ` — ${run.error.message}`
      : '';
  return `(run ${run.status}${reason}${why})`;
}

/**
 * A run the API refused at its door (decision 0440), in words: nothing was sent to the model.
 * Undefined for any other failure.
 */
export function refusedLine(error: {
  status?: number | undefined;
  code?: string | undefined;
  message: string;
}) {
  if (error.status !== 429) return undefined;
  if (error.code === 'quota_exceeded') return `not sent: your quota is used up — ${error.message}`;
  if (error.code === 'concurrency_limit')
    return `not sent: too many of your runs are under way — ${error.message}; send it again when one ends`;
  return undefined;
}
