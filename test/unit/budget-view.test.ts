/**
 * The thread's budget as clients read it (spent / reserved / left): a number for every limit the
 * API accepts, however large — schemathesis once sent max_cost_usd 5.75e+307, and `left` came back
 * null (Infinity through JSON), outside the documented schema.
 */
import { budgetLeft } from '../../workflows/core/budget';
import { toThread } from '../../workflows/core/views';
import { freshThread } from '../helpers/reducer';

describe("a thread's budget view", () => {
  it.each([5.75443258517077e307, Number.MAX_VALUE, 1e300, 12.5])(
    'is a number for max_cost_usd %d',
    (limit) => {
      const state = freshThread({ max_cost_usd: limit });
      const view = JSON.parse(JSON.stringify(toThread(state))) as { budget: { left: { cost_usd: unknown } } };
      expect(typeof view.budget.left.cost_usd).toBe('number');
      expect(view.budget.left.cost_usd).toBeLessThanOrEqual(limit);
      expect(budgetLeft(state)?.cost_usd).toBe(view.budget.left.cost_usd);
    },
  );

  it('still rounds an ordinary limit down to micro-dollars', () => {
    expect(budgetLeft(freshThread({ max_cost_usd: 0.1234567891 }))?.cost_usd).toBe(0.123456);
  });
});
