/**
 * The warning an ordinary-user worker gives when its own process limit, which every sandbox's
 * processes also count against (decision 0465), is below what its concurrent calls could take.
 */
import { readFileSync } from 'node:fs';
import { processBudgetWarning, processLimitOf } from '../../activities/tools/process-budget';

const limitsText = (soft: string) =>
  [
    'Limit                     Soft Limit           Hard Limit           Units     ',
    'Max cpu time              unlimited            unlimited            seconds   ',
    `Max processes             ${soft.padEnd(21)}unlimited            processes `,
    'Max open files            20000                20000                files     ',
  ].join('\n');

describe('the process limit read from /proc/self/limits', () => {
  it.each([
    ['96365', 96365],
    ['unlimited', 'unlimited'],
    ['lots', undefined],
  ])('reads a soft limit of %s', (soft, expected) => {
    expect(processLimitOf(limitsText(soft))).toBe(expected);
  });

  it("reads this process's own, and nothing from a text without it", () => {
    expect(processLimitOf(readFileSync('/proc/self/limits', 'utf8'))).toBeDefined();
    expect(processLimitOf('')).toBeUndefined();
  });
});

describe("the warning about the worker's own process limit", () => {
  const base = { root: false, perCall: 256, concurrentCalls: 100 };

  it.each([
    ['unlimited', { limit: 'unlimited' as const }],
    ['unread', { limit: undefined }],
    ['enough for every call at once', { limit: 25_600 }],
    ['a root worker (a uid per workspace)', { limit: 100, root: true }],
  ])('says nothing when the limit is %s', (_name, options) => {
    expect(processBudgetWarning({ ...base, ...options })).toBeUndefined();
  });

  it('says how many floods fill a lower limit, and what to raise it to', () => {
    expect(processBudgetWarning({ ...base, limit: 4096 })).toBe(
      "This worker's own process limit (ulimit -u 4096) is shared by every sandbox it runs: 16 thread(s) " +
        "holding KEEL_SANDBOX_PROCESSES=256 at once fill it, and then other threads' commands fail until " +
        'those time out. Raise it to 25600 or more (KEEL_SANDBOX_PROCESSES × 100 calls at once), or leave ' +
        'it unlimited (Docker does by default).',
    );
    expect(processBudgetWarning({ ...base, limit: 100 })).toMatch(/: 1 thread\(s\) holding/);
  });
});
