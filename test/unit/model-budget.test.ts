/**
 * A model call's ceiling, as the activity fits it (decision 0425): the worst case of the call is
 * reserved, `max_tokens` lowered to fit, the call refused when not even a minimal answer fits.
 */
import { fitCall, minimalAnswerTokens } from '../../activities/model-budget';
import { zeroUsage } from '../../common/usage';

const sonnet = { input: 3, output: 15, cache_write: 3.75, cache_read: 0.3 };
const nothingSpent = zeroUsage;
type CallToFit = Parameters<typeof fitCall>[0];
/** A call of 1,000 input tokens to Sonnet, of the usual 8,192-token answer, nothing spent yet. */
const fitOneCall = (budget: CallToFit['budget'], call: Partial<CallToFit> = {}) =>
  fitCall({
    budget,
    spent: nothingSpent,
    inputTokens: 1_000,
    price: sonnet,
    maxOutputTokens: 8_192,
    ...call,
  });

describe('fitting a model call into its budget', () => {
  it('asks for the usual answer when the budget leaves room for it', () => {
    const fit = fitOneCall({ tokens: 100_000 });
    expect(fit).toMatchObject({ maxTokens: 8_192, reserved: { input_tokens: 1_000, output_tokens: 8_192 } });
  });

  it('lowers max_tokens to what is left of a token budget after the input', () => {
    const fit = fitOneCall({ tokens: 2_500 });
    expect(fit).toMatchObject({ maxTokens: 1_500 });
  });

  it('lowers max_tokens to what a dollar budget pays for, the input priced as a cache write', () => {
    // 1,000 input tokens at $3.75/M = $0.00375; $0.01 leaves $0.00625, 416 tokens at $15/M.
    const fit = fitOneCall({ cost_usd: 0.01 });
    expect(fit).toMatchObject({ maxTokens: 416, reserved: { cost_usd: 0.00999 } });
    if (typeof fit === 'string') throw new Error(fit);
    expect(fit.reserved.cost_usd).toBeLessThanOrEqual(0.01);
  });

  it('takes the tighter of two limits, and counts what earlier attempts spent', () => {
    const spent = { ...zeroUsage, input_tokens: 1_000, output_tokens: 200, cost_usd: 0.006 };
    const fit = fitOneCall({ tokens: 5_000, cost_usd: 0.02 }, { spent });
    // Tokens: 5,000 − 1,200 − 1,000 = 2,800. Dollars: 0.02 − 0.006 − 0.00375 = 0.01025: 683 tokens.
    expect(fit).toMatchObject({ maxTokens: 683 });
  });

  it("names the owner's quota, not the thread's budget, when the run's share of the quota is the ceiling", () => {
    const refusal = fitOneCall({ cost_usd: 0.000001, ceiling: 'quota' });
    expect(refusal).toMatch(
      /its ceilings leave \$0\.000001 \(the dollars: what its owner's quota allows the run\);/,
    );
    expect(refusal).toMatch(/the quota frees room as its period turns or its runs settle$/);
    expect(refusal).not.toMatch(/the thread has|raise the budget/);
  });

  it('refuses the call, saying what it needs and what is left, when not even a minimal answer fits', () => {
    const refusal = fitOneCall({ tokens: 300 });
    expect(refusal).toBe(
      `the next model call needs at least ${1_000 + minimalAnswerTokens} tokens (its input of 1000 tokens and a ${minimalAnswerTokens}-token answer), and the thread has 300 tokens left; raise the budget to continue`,
    );
    expect(typeof fitOneCall({ tokens: 1_000 + minimalAnswerTokens - 1 })).toBe('string');
    expect(fitOneCall({ tokens: 1_000 + minimalAnswerTokens })).toMatchObject({
      maxTokens: minimalAnswerTokens,
    });
  });

  it('lets a model that costs nothing run under a dollar budget, and limits it by tokens alone', () => {
    const free = { input: 0, output: 0, cache_write: 0, cache_read: 0 };
    expect(fitOneCall({ cost_usd: 0.001 }, { inputTokens: 50_000, price: free })).toMatchObject({
      maxTokens: 8_192,
    });
    expect(
      fitOneCall({ cost_usd: 0.001, tokens: 600 }, { inputTokens: 500, price: undefined }),
    ).toMatchObject({ maxTokens: 100 });
  });
});
