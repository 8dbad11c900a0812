/**
 * Cost controls, pure. The thread is the ledger of its budget (decision 0425): what was spent,
 * plus what its child agents were given as their own limits and have not reported yet. Each
 * model call is given what is left as its ceiling (the activity fits the answer's `max_tokens`
 * into it, or refuses the call); at 80 % of either limit `budget.warning` is emitted once; with
 * nothing left no further model call is made and the run ends `failed` with `budget_exceeded`.
 */
import type { ModelCallBudget } from '../../common/activities';
import type { BudgetLimitView } from '../../common/events';
import type { UpdateLimitsInput } from '../../common/approvals';
import type { RunError } from '../../common/run';
import type { ThreadConfig } from '../../common/thread';
import { totalTokens, type Usage } from '../../common/usage';
import { emit } from './emit';
import { quotaLeft } from './quota';
import type { ThreadState } from './state';
import type { Command, Transition } from './transitions';

/** The share of the budget at which `budget.warning` is emitted. */
export const warningFraction = 0.8;

export function limitView(config: ThreadConfig): BudgetLimitView {
  return {
    ...(config.max_tokens === undefined ? {} : { max_tokens: config.max_tokens }),
    ...(config.max_cost_usd === undefined ? {} : { max_cost_usd: config.max_cost_usd }),
  };
}

/** The larger share of the two limits used so far (0 with no limits). */
export function budgetFraction(usage: Usage, config: ThreadConfig): number {
  const shares = [
    config.max_tokens === undefined ? 0 : totalTokens(usage) / config.max_tokens,
    config.max_cost_usd === undefined ? 0 : usage.cost_usd / config.max_cost_usd,
  ];
  return Math.max(...shares);
}

/** Micro-dollars: the unit usage is rounded to (see `addUsage`). */
const roundDown = (dollars: number): number => {
  const nanos = Math.round(dollars * 1e9);
  // A limit too large to count in nano-dollars (the API takes any positive number) is kept as it is:
  // Infinity would reach clients as null.
  return Number.isFinite(nanos) ? Math.floor(nanos / 1e3) / 1e6 : dollars;
};

/** What the thread's child agents hold of its budget: the limits they were given, not yet reported. */
export function reserved(state: ThreadState): { tokens: number; cost_usd: number } {
  let tokens = 0;
  let cost = 0;
  for (const child of state.children ?? []) {
    tokens += child.allowance?.tokens ?? 0;
    cost += child.allowance?.cost_usd ?? 0;
  }
  return { tokens, cost_usd: Math.round(cost * 1e6) / 1e6 };
}

/**
 * What is left of each limit the thread has (limit − spent − reserved, never below 0), or
 * undefined without limits: the ceiling of the next model call, or of a child's share.
 */
export function budgetLeft(state: ThreadState): ModelCallBudget | undefined {
  const { config } = state.thread;
  const quota = quotaLeft(state);
  if (config.max_tokens === undefined && config.max_cost_usd === undefined && quota === undefined)
    return undefined;
  const held = reserved(state);
  const threadCost =
    config.max_cost_usd === undefined
      ? undefined
      : Math.max(0, roundDown(config.max_cost_usd - state.usage.cost_usd - held.cost_usd));
  // The run's share of its owner's quota is one more ceiling (decision 0440): the lesser holds.
  const cost = quota === undefined ? threadCost : Math.min(threadCost ?? Infinity, quota);
  return {
    ...(config.max_tokens === undefined
      ? {}
      : { tokens: Math.max(0, config.max_tokens - totalTokens(state.usage) - held.tokens) }),
    ...(cost === undefined ? {} : { cost_usd: cost }),
  };
}

/** Whether the active run's share of its owner's quota, not the thread's budget, limits its spend. */
export function quotaBinds(state: ThreadState): boolean {
  const quota = quotaLeft(state);
  if (quota === undefined) return false;
  const { config } = state.thread;
  const held = reserved(state);
  const threadCost =
    config.max_cost_usd === undefined ? Infinity : config.max_cost_usd - state.usage.cost_usd - held.cost_usd;
  return quota < threadCost;
}

const heldNote = (held: number, unit: (value: number) => string): string =>
  held > 0 ? ` (and ${unit(held)} held by sub-agents)` : '';

/** Why the next model call may not be made, or undefined when the budget allows it. */
export function budgetExceeded(state: ThreadState): RunError | undefined {
  const { config } = state.thread;
  const { usage } = state;
  const held = reserved(state);
  if (config.max_tokens !== undefined && totalTokens(usage) + held.tokens >= config.max_tokens) {
    return {
      type: 'BudgetExceeded',
      message: `the thread used ${totalTokens(usage)} tokens${heldNote(held.tokens, (n) => `${n} more`)} of its ${config.max_tokens}-token budget; raise max_tokens to continue`,
    };
  }
  if (config.max_cost_usd !== undefined && usage.cost_usd + held.cost_usd >= config.max_cost_usd) {
    return {
      type: 'BudgetExceeded',
      message: `the thread spent $${usage.cost_usd.toFixed(4)}${heldNote(held.cost_usd, (n) => `$${n.toFixed(4)} more`)} of its $${config.max_cost_usd} budget; raise max_cost_usd to continue`,
    };
  }
  return undefined;
}

/**
 * The limits a child agent gets, carved out of what is left here: an equal share for each of
 * the `siblings` the same answer spawns, and one kept for this thread to read their reports. So
 * children running at once can never spend more together than this thread has left. With
 * nothing left a child still starts, with the least limit there is (a token, a micro-dollar):
 * it refuses its own first call and spends nothing, and a history recorded before the ceiling,
 * which started it, replays the same commands. Undefined without limits.
 */
export function childAllowance(state: ThreadState, siblings: number): ModelCallBudget | undefined {
  const left = budgetLeft(state);
  if (left === undefined) return undefined;
  const shares = Math.max(1, siblings) + 1;
  return {
    ...(left.tokens === undefined ? {} : { tokens: Math.max(1, Math.floor(left.tokens / shares)) }),
    ...(left.cost_usd === undefined ? {} : { cost_usd: Math.max(1e-6, roundDown(left.cost_usd / shares)) }),
  };
}

export function exceededEvent(state: ThreadState, runId: string): Command {
  return emit.budget('budget.exceeded', runId, state.usage, limitView(state.thread.config));
}

/** Emits `budget.warning` the first time usage reaches 80 % of a limit. */
export function warnIfNear(state: ThreadState, runId: string): Transition {
  if (state.budget_warned === true || budgetFraction(state.usage, state.thread.config) < warningFraction)
    return { state, commands: [] };
  return {
    state: { ...state, budget_warned: true },
    commands: [emit.budget('budget.warning', runId, state.usage, limitView(state.thread.config))],
  };
}

/**
 * New limits. The warning is re-armed when usage falls below 80 % of the new limits, so a
 * raised budget warns again as it nears its new end.
 */
export function updateLimits(state: ThreadState, limits: UpdateLimitsInput): Transition {
  const { max_tokens: _tokens, max_cost_usd: _cost, ...kept } = state.thread.config;
  const maxTokens = limits.max_tokens === undefined ? state.thread.config.max_tokens : limits.max_tokens;
  const maxCost = limits.max_cost_usd === undefined ? state.thread.config.max_cost_usd : limits.max_cost_usd;
  const config: ThreadConfig = {
    ...kept,
    ...(maxTokens === null || maxTokens === undefined ? {} : { max_tokens: maxTokens }),
    ...(maxCost === null || maxCost === undefined ? {} : { max_cost_usd: maxCost }),
  };
  const warned = budgetFraction(state.usage, config) >= warningFraction && state.budget_warned === true;
  return { state: { ...state, thread: { ...state.thread, config }, budget_warned: warned }, commands: [] };
}

export function validateLimits(limits: UpdateLimitsInput): string | undefined {
  for (const [key, value] of Object.entries(limits)) {
    if (key !== 'max_tokens' && key !== 'max_cost_usd') return `unknown limit "${key}"`;
    if (value === null || value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
      return `${key} must be a positive number or null`;
    if (key === 'max_tokens' && !Number.isInteger(value)) return 'max_tokens must be an integer';
  }
  return undefined;
}

/** " of 10,000 tokens / $1.00 (82 %)" for the operator view, or nothing without limits. */
export function budgetNote(state: ThreadState): string {
  const { config } = state.thread;
  const parts = [
    ...(config.max_tokens === undefined ? [] : [`${config.max_tokens.toLocaleString('en-US')} tokens`]),
    ...(config.max_cost_usd === undefined ? [] : [`$${config.max_cost_usd}`]),
  ];
  if (parts.length === 0) return '';
  return ` of ${parts.join(' / ')} (${Math.round(budgetFraction(state.usage, config) * 100)} %)`;
}
