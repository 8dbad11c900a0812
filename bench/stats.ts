/** Medians with their spread, and percentiles, for benchmark figures. */

export interface Spread {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function percentile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  // Nearest rank: the smallest value with at least q of the samples at or below it.
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function spread(values: number[]): Spread {
  if (values.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, n: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { median, min: sorted[0]!, max: sorted.at(-1)!, n: sorted.length };
}

/** "12.3 (11.0–14.1)": a median with its min and max. */
export function showSpread(value: Spread, digits = 1, unit = ''): string {
  if (value.n === 0) return '—';
  const f = (x: number) => `${x.toFixed(digits)}${unit}`;
  return value.n === 1 ? f(value.median) : `${f(value.median)} (${f(value.min)}–${f(value.max)})`;
}
