/**
 * A model call's ceiling (decision 0425). The workflow gives each call what is left of the
 * thread's budget; here the call's worst case is reserved before it is made: its input as
 * counted, at the dearest input price (a cache write costs more than plain input), plus the
 * answer's `max_tokens` at the output price. `max_tokens` is lowered until that fits, and the
 * call is refused when not even a minimal answer would.
 */
import type { ApplicationFailure } from '@temporalio/common';
import type { ModelCallBudget } from '../common/activities';
import { FailureType } from '../common/failures';
import { totalTokens, type Usage } from '../common/usage';
import { failure } from './errors';
import type { Price } from './model/prices';

/** The shortest answer worth paying for: a call that cannot get this many tokens is refused. */
export const minimalAnswerTokens = 32;

export interface CallFit {
  /** The answer's `max_tokens`, lowered to what the budget allows. */
  maxTokens: number;
  /** The call's worst case: what it may be billed at most. */
  reserved: Usage;
}

export interface FitOptions {
  budget: ModelCallBudget;
  /** What earlier attempts of this call spent (or may have). */
  spent: Usage;
  inputTokens: number;
  /** Undefined for a model the price table does not know: it costs nothing. */
  price: Price | undefined;
  /** The `max_tokens` the call asks for when the budget does not limit it. */
  maxOutputTokens: number;
}

// Prices are dollars per million tokens, so micro-dollars per token: sums stay in whole units.
const micros = (dollars: number): number => Math.round(dollars * 1e6);

/** The call's `max_tokens` and reservation, or why it may not be made. */
export function fitCall({
  budget,
  spent,
  inputTokens,
  price,
  maxOutputTokens,
}: FitOptions): CallFit | string {
  const inputPrice = price === undefined ? 0 : Math.max(price.input, price.cache_write, price.cache_read);
  const outputPrice = price?.output ?? 0;
  const inputMicros = Math.ceil(inputTokens * inputPrice);
  const byTokens = budget.tokens === undefined ? Infinity : budget.tokens - totalTokens(spent) - inputTokens;
  const costRoom =
    budget.cost_usd === undefined ? Infinity : micros(budget.cost_usd) - micros(spent.cost_usd) - inputMicros;
  const byCost = outputPrice === 0 ? (costRoom < 0 ? -1 : Infinity) : Math.floor(costRoom / outputPrice);
  const maxTokens = Math.floor(Math.min(maxOutputTokens, byTokens, byCost));
  if (maxTokens < minimalAnswerTokens)
    return refusalMessage(budget, spent, inputTokens, inputMicros, outputPrice);
  return {
    maxTokens,
    reserved: {
      input_tokens: inputTokens,
      output_tokens: maxTokens,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cost_usd: Math.ceil(inputMicros + maxTokens * outputPrice) / 1e6,
    },
  };
}

const dollars = (value: number): string => `$${Number(value.toFixed(6))}`;

function refusalMessage(
  budget: ModelCallBudget,
  spent: Usage,
  inputTokens: number,
  inputMicros: number,
  outputPrice: number,
): string {
  const retried = totalTokens(spent) > 0 ? ' after the attempts before it' : '';
  const needs: string[] = [];
  const left: string[] = [];
  if (budget.tokens !== undefined) {
    needs.push(`${inputTokens + minimalAnswerTokens} tokens`);
    left.push(`${Math.max(0, budget.tokens - totalTokens(spent))} tokens`);
  }
  if (budget.cost_usd !== undefined) {
    needs.push(dollars((inputMicros + minimalAnswerTokens * outputPrice) / 1e6));
    left.push(dollars(Math.max(0, budget.cost_usd - spent.cost_usd)));
  }
  const quota = budget.ceiling === 'quota';
  return (
    `the next model call needs at least ${needs.join(' / ')} (its input of ${inputTokens} tokens and ` +
    `a ${minimalAnswerTokens}-token answer), and ` +
    (quota
      ? `its ceilings leave ${left.join(' / ')}${retried} (the dollars: what its owner's quota allows the run); `
      : `the thread has ${left.join(' / ')} left${retried}; `) +
    (quota ? 'the quota frees room as its period turns or its runs settle' : 'raise the budget to continue')
  );
}

/** The refusal, final: what earlier attempts spent rides along for the workflow's ledger. */
export function budgetRefusal(message: string, spent: Usage): ApplicationFailure {
  return failure(FailureType.budgetExceeded, message, {
    nonRetryable: true,
    details: totalTokens(spent) > 0 || spent.cost_usd > 0 ? [{ billed: spent }] : [],
  });
}
