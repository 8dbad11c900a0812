/**
 * An owner's quota ledger, pure (decision 0440): spend per UTC day and month, and the runs under
 * way with the share of what was left each was given. Each admitted run holds its share until it
 * settles with what it was billed, so runs at once can never together spend more than was left.
 * Time comes in from the workflow clock.
 */
import type { Admission, AdmitRunInput, QuotaLimits, QuotaView, QuotaWindow, SettleRunInput } from './quota';

export interface LedgerState {
  day: string;
  day_spent_usd: number;
  month: string;
  month_spent_usd: number;
  /** Runs under way: their share (0 without a spend quota) and when they were admitted. */
  active: Record<string, { cost_usd: number; at_ms: number }>;
  /** Keys of runs settled lately, newest last: a settled run asked again is not admitted twice. */
  settled: string[];
}

/** How long a run refused for concurrency is told to wait: slots free as runs end. */
export const concurrencyRetryAfterS = 2;
/** A reservation never settled is given up after this long (`KEEL_QUOTA_LEASE_S`). */
export const defaultLeaseS = 6 * 3600;
const settledKept = 1_000;

const micros = (dollars: number): number => Math.round(dollars * 1e6);
const dollars = (value: number): number => value / 1e6;
const dayOf = (now: number): string => new Date(now).toISOString().slice(0, 10);
const monthOf = (now: number): string => new Date(now).toISOString().slice(0, 7);

function nextDay(now: number): number {
  const at = new Date(now);
  return Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1);
}
function nextMonth(now: number): number {
  const at = new Date(now);
  return Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1);
}

export const emptyLedger = (now: number): LedgerState => ({
  day: dayOf(now),
  day_spent_usd: 0,
  month: monthOf(now),
  month_spent_usd: 0,
  active: {},
  settled: [],
});

/** A new day or month starts from nothing spent; reservations carry over. */
function roll(state: LedgerState, now: number): LedgerState {
  const day = dayOf(now);
  const month = monthOf(now);
  return {
    ...state,
    ...(day === state.day ? {} : { day, day_spent_usd: 0 }),
    ...(month === state.month ? {} : { month, month_spent_usd: 0 }),
  };
}

const spend = (state: LedgerState, billed: number): LedgerState => ({
  ...state,
  day_spent_usd: dollars(micros(state.day_spent_usd) + micros(billed)),
  month_spent_usd: dollars(micros(state.month_spent_usd) + micros(billed)),
});

function settledKey(state: LedgerState, key: string): LedgerState {
  const { [key]: _gone, ...active } = state.active;
  return { ...state, active, settled: [...state.settled, key].slice(-settledKept) };
}

/** Reservations older than the lease are given up, their whole share counted as spent. */
function expire(state: LedgerState, limits: QuotaLimits, now: number): LedgerState {
  const leaseMs = (limits.lease_s ?? defaultLeaseS) * 1_000;
  let next = state;
  for (const [key, held] of Object.entries(state.active))
    if (now - held.at_ms > leaseMs) next = settledKey(spend(next, held.cost_usd), key);
  return next;
}

const reservedUsd = (state: LedgerState): number =>
  dollars(Object.values(state.active).reduce((sum, held) => sum + micros(held.cost_usd), 0));

function windowOf(
  window: string,
  spent: number,
  reserved: number,
  limit: number | undefined,
  resets: number,
): QuotaWindow {
  return {
    window,
    spent_usd: spent,
    reserved_usd: reserved,
    ...(limit === undefined
      ? {}
      : {
          limit_usd: limit,
          left_usd: Math.max(0, dollars(micros(limit) - micros(spent) - micros(reserved))),
        }),
    resets_at: new Date(resets).toISOString(),
  };
}

export function quotaView(state: LedgerState, limits: QuotaLimits, now: number): QuotaView {
  const current = expire(roll(state, now), limits, now);
  const reserved = reservedUsd(current);
  return {
    day: windowOf(current.day, current.day_spent_usd, reserved, limits.day_usd, nextDay(now)),
    month: windowOf(current.month, current.month_spent_usd, reserved, limits.month_usd, nextMonth(now)),
    runs: {
      active: Object.keys(current.active).length,
      ...(limits.concurrent_runs === undefined ? {} : { limit: limits.concurrent_runs }),
    },
  };
}

/**
 * A run asks for a slot and a share. Refused for concurrency when the owner's runs under way
 * fill the slots, and for spend when nothing is left in the day or the month. The share is what
 * is left divided among the free slots (without a slot limit, half of it: a run never takes all),
 * so the runs admitted at once never hold more than was left. Asked again, a run gets what it got.
 */
export function admitRun(
  state: LedgerState,
  { key, limits }: AdmitRunInput,
  now: number,
): { state: LedgerState; admission: Admission } {
  const current = expire(roll(state, now), limits, now);
  const held = current.active[key];
  if (held !== undefined)
    return { state: current, admission: { admitted: true, ...shareOf(limits, held.cost_usd) } };
  if (current.settled.includes(key)) return { state: current, admission: { admitted: true } };
  const active = Object.keys(current.active).length;
  if (limits.concurrent_runs !== undefined && active >= limits.concurrent_runs)
    return {
      state: current,
      admission: {
        admitted: false,
        reason: 'concurrency',
        retry_after_s: concurrencyRetryAfterS,
        message: `${active} runs are under way, the most this owner may have at once; retry when one ends`,
      },
    };
  const view = quotaView(current, limits, now);
  const lefts = [view.day, view.month].filter((window) => window.left_usd !== undefined);
  if (lefts.length === 0) {
    const admitted = { ...current, active: { ...current.active, [key]: { cost_usd: 0, at_ms: now } } };
    return { state: admitted, admission: { admitted: true } };
  }
  const binding = lefts.reduce((least, window) => (window.left_usd! < least.left_usd! ? window : least));
  const shares = limits.concurrent_runs === undefined ? 2 : limits.concurrent_runs - active;
  const share = Math.floor(micros(binding.left_usd!) / Math.max(1, shares));
  if (share < 1) {
    const which = binding === view.day ? 'day' : 'month';
    return {
      state: current,
      admission: {
        admitted: false,
        reason: 'quota_exceeded',
        retry_after_s: Math.max(1, Math.ceil((Date.parse(binding.resets_at) - now) / 1_000)),
        message:
          `this owner's quota of $${binding.limit_usd} a ${which} is spent or held by runs under way ` +
          `($${binding.spent_usd} spent, $${binding.reserved_usd} held); it resets at ${binding.resets_at}`,
      },
    };
  }
  const cost = dollars(share);
  const admitted = { ...current, active: { ...current.active, [key]: { cost_usd: cost, at_ms: now } } };
  return { state: admitted, admission: { admitted: true, cost_usd: cost } };
}

const shareOf = (limits: QuotaLimits, cost: number): { cost_usd?: number } =>
  limits.day_usd === undefined && limits.month_usd === undefined ? {} : { cost_usd: cost };

/**
 * A run ended: its slot is freed and what it was billed is spent (in the window it ends in). A
 * run unknown here (settled already, or given up at its lease) changes nothing.
 */
export function settleRun(state: LedgerState, { key, billed_usd }: SettleRunInput, now: number): LedgerState {
  const current = roll(state, now);
  if (current.active[key] === undefined) return current;
  return settledKey(spend(current, Math.max(0, billed_usd)), key);
}
