/**
 * What the thread's budget says once a run is over (decisions 0425, 0440): what it spent, what
 * its sub-agents hold, what is left; and the person's quota across threads, when the operator set
 * one. Read from the thread (`budget`) and `GET /quota`; nothing shown for what is not limited.
 */
import { useEffect, useState } from 'react';
import { dollars } from '../format';
import { keelRequest, segment, type Connection } from '../keel-api';

interface Amount {
  tokens?: number;
  cost_usd?: number;
}
interface ThreadBudget {
  budget?: { spent: Amount; reserved: Amount; left: Amount };
}
interface QuotaWindow {
  spent_usd: number;
  reserved_usd: number;
  limit_usd?: number;
  left_usd?: number;
}
interface Quota {
  day: QuotaWindow;
  month: QuotaWindow;
  runs: { active: number; limit?: number };
}

function amount(value: Amount, left: Amount): string {
  return [
    ...(left.tokens === undefined ? [] : [`${(value.tokens ?? 0).toLocaleString('en')} tokens`]),
    ...(left.cost_usd === undefined ? [] : [dollars(value.cost_usd ?? 0)]),
  ].join(' ');
}

function quotaText(quota: Quota): string | undefined {
  const windows: [string, QuotaWindow][] = [
    ['today', quota.day],
    ['this month', quota.month],
  ];
  const parts = windows.flatMap(([name, window]) =>
    window.limit_usd === undefined
      ? []
      : [
          `${name} ${dollars(window.spent_usd)} of ${dollars(window.limit_usd)} (reserved ${dollars(window.reserved_usd)}, left ${dollars(window.left_usd ?? 0)})`,
        ],
  );
  return parts.length === 0 ? undefined : `Your quota: ${parts.join('; ')}.`;
}

/** `at`: anything that changes when the budget may have (the thread's spend, a run's end). */
export function BudgetLine({
  connection,
  threadId,
  at,
}: {
  connection: Connection;
  threadId: string;
  at: string;
}) {
  const [budget, setBudget] = useState<string | undefined>();
  const [quota, setQuota] = useState<string | undefined>();
  useEffect(() => {
    let current = true;
    keelRequest<ThreadBudget>(connection, 'GET', `/threads/${segment(threadId)}`).then(
      ({ budget: found }) => {
        if (!current) return;
        setBudget(
          found === undefined
            ? undefined
            : `Budget: spent ${amount(found.spent, found.left)} · reserved ${amount(found.reserved, found.left)} · left ${amount(found.left, found.left)}`,
        );
      },
      () => undefined,
    );
    // An API of an earlier release has no quotas: nothing is said.
    keelRequest<Quota>(connection, 'GET', '/quota').then(
      (found) => current && setQuota(quotaText(found)),
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, [connection, threadId, at]);
  return (
    <>
      {budget !== undefined && (
        <p className="usage" aria-label="Budget">
          {budget}
        </p>
      )}
      {quota !== undefined && (
        <p className="usage" aria-label="Quota">
          {quota}
        </p>
      )}
    </>
  );
}
