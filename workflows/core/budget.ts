/**
 * Cost controls, pure. The budget is checked before every model call: at 80 % of either limit
 * `budget.warning` is emitted once; at 100 % no further model call is made and the run ends
 * `failed` with `budget_exceeded`. Child agents' usage counts against the same budget.
 */
import type { BudgetLimitView } from '../../common/events';
import type { UpdateLimitsInput } from '../../common/approvals';
import type { RunError } from '../../common/run';
import type { ThreadConfig } from '../../common/thread';
import { totalTokens, type Usage } from '../../common/usage';
import { emit } from './emit';
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

/** Why the next model call may not be made, or undefined when the budget allows it. */
export function budgetExceeded(state: ThreadState): RunError | undefined {
  const { config } = state.thread;
  const { usage } = state;
  if (config.max_tokens !== undefined && totalTokens(usage) >= config.max_tokens) {
    return {
      type: 'BudgetExceeded',
      message: `the thread used ${totalTokens(usage)} tokens of its ${config.max_tokens}-token budget; raise max_tokens to continue`,
    };
  }
  if (config.max_cost_usd !== undefined && usage.cost_usd >= config.max_cost_usd) {
    return {
      type: 'BudgetExceeded',
      message: `the thread spent $${usage.cost_usd.toFixed(4)} of its $${config.max_cost_usd} budget; raise max_cost_usd to continue`,
    };
  }
  return undefined;
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
