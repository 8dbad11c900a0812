import { summarize } from '../../bench/profile-turns';

const frame = (functionName: string, url = '') => ({ functionName, url, lineNumber: 0 });

/**
 * (root) → main → work → work (recursion) and (root) → (idle); samples 10 µs apart from t = 1000,
 * so the n-th sample is taken at 1000 + 10 n and weighs the delta that follows it.
 */
const profile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 5] },
    { id: 2, callFrame: frame('main', 'file:///app/node_modules/pkg/index.js'), children: [3] },
    { id: 3, callFrame: frame('work', 'file:///app/node_modules/@scope/lib/work.js'), children: [4] },
    { id: 4, callFrame: frame('work', 'file:///app/node_modules/@scope/lib/work.js') },
    { id: 5, callFrame: frame('(idle)') },
  ],
  startTime: 1000,
  endTime: 1060,
  samples: [2, 3, 4, 5, 4, 2],
  timeDeltas: [10, 10, 10, 10, 10, 10],
};

describe('the profile summary of bench/profile-turns.ts', () => {
  it('counts only the samples inside the window, and never idle time', () => {
    // Samples at 1010 … 1060; the window takes 1020 … 1050: work, work (deep), idle, work (deep).
    const summary = summarize(profile, 1020, 1050);
    expect(summary.total).toBe(30);
    expect(summary.self.get('work work.js:1')).toBe(30);
    expect(summary.self.has('main index.js:1')).toBe(false);
  });

  it('gives a recursive function its inclusive time once per sample, and self time to packages', () => {
    const summary = summarize(profile, 0, Infinity);
    expect(summary.inclusive.get('work work.js:1')).toBe(30);
    expect(summary.inclusive.get('main index.js:1')).toBe(40);
    expect(summary.packages.get('@scope/lib')).toBe(30);
    // The last sample has no delta after it.
    expect(summary.packages.get('pkg')).toBe(10);
  });
});
