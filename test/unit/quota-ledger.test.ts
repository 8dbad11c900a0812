/** An owner's quota ledger (decision 0440): shares, refusals, settlement, leases and windows. */
import { admitRun, emptyLedger, quotaView, settleRun, type LedgerState } from '../../common/quota-ledger';
import type { QuotaLimits } from '../../common/quota';

const noon = Date.UTC(2026, 10, 27, 12);
const limits: QuotaLimits = { day_usd: 1, month_usd: 10, concurrent_runs: 4 };

function admitAll(keys: string[], state: LedgerState, at = noon, given = limits) {
  const shares: (number | undefined)[] = [];
  for (const key of keys) {
    const next = admitRun(state, { key, limits: given }, at);
    state = next.state;
    shares.push(next.admission.admitted ? next.admission.cost_usd : undefined);
  }
  return { state, shares };
}

describe('the quota ledger', () => {
  it('shares what is left among the free slots, so runs at once never hold more than is left', () => {
    const { state, shares } = admitAll(['a', 'b', 'c', 'd'], emptyLedger(noon));
    expect(shares).toEqual([0.25, 0.25, 0.25, 0.25]);
    expect(quotaView(state, limits, noon).day).toMatchObject({ reserved_usd: 1, left_usd: 0 });
  });

  it('refuses a run past the concurrency quota, for a moment', () => {
    const { state } = admitAll(['a', 'b', 'c', 'd'], emptyLedger(noon));
    const refused = admitRun(state, { key: 'e', limits }, noon).admission;
    expect(refused).toMatchObject({ admitted: false, reason: 'concurrency', retry_after_s: 2 });
  });

  it('without a slot quota gives half of what is left, and refuses when nothing is, until the day ends', () => {
    const open = { day_usd: 0.000004 };
    const { state, shares } = admitAll(['a', 'b', 'c', 'd'], emptyLedger(noon), noon, open);
    expect(shares).toEqual([0.000002, 0.000001, undefined, undefined]);
    const refused = admitRun(state, { key: 'e', limits: open }, noon).admission;
    expect(refused).toMatchObject({ admitted: false, reason: 'quota_exceeded', retry_after_s: 12 * 3600 });
  });

  it('settles a run with what it was billed, once, and frees its slot', () => {
    let { state } = admitAll(['a', 'b'], emptyLedger(noon));
    state = settleRun(state, { key: 'a', billed_usd: 0.1 }, noon);
    state = settleRun(state, { key: 'a', billed_usd: 0.1 }, noon);
    const view = quotaView(state, limits, noon);
    expect(view.day).toMatchObject({ spent_usd: 0.1, reserved_usd: 0.25, left_usd: 0.65 });
    expect(view.runs).toEqual({ active: 1, limit: 4 });
    // A settled run asked again is not admitted a second time.
    expect(admitRun(state, { key: 'a', limits }, noon).admission).toEqual({ admitted: true });
    expect(quotaView(admitRun(state, { key: 'a', limits }, noon).state, limits, noon).runs.active).toBe(1);
  });

  it('gives a run asked again the share it already has', () => {
    const { state } = admitAll(['a'], emptyLedger(noon));
    expect(admitRun(state, { key: 'a', limits }, noon).admission).toEqual({ admitted: true, cost_usd: 0.25 });
  });

  it('gives up a reservation never settled at its lease, counting its whole share as spent', () => {
    const { state } = admitAll(['a'], emptyLedger(noon), noon, { ...limits, lease_s: 60 });
    const later = quotaView(state, { ...limits, lease_s: 60 }, noon + 61_000);
    expect(later.day).toMatchObject({ spent_usd: 0.25, reserved_usd: 0 });
    expect(later.runs.active).toBe(0);
  });

  it('starts a new day from nothing spent, and keeps the month', () => {
    let { state } = admitAll(['a'], emptyLedger(noon));
    state = settleRun(state, { key: 'a', billed_usd: 0.2 }, noon);
    const tomorrow = quotaView(state, limits, noon + 24 * 3600_000);
    expect(tomorrow.day).toMatchObject({ window: '2026-11-28', spent_usd: 0, left_usd: 1 });
    expect(tomorrow.month).toMatchObject({ window: '2026-11', spent_usd: 0.2 });
  });
});
