/**
 * The dev server's own counters (Prometheus, when it runs with `--metrics-port`): requests by
 * operation and persistence operations, read before and after a workload to count them per turn.
 *
 *   KEEL_BENCH_DEV_SERVER_ARGS='--metrics-port 22091' KEEL_BENCH_METRICS_PORT=22091 npm run bench -- …
 */

export const serverMetrics = [
  'service_requests',
  'persistence_requests',
  'visibility_persistence_requests',
] as const;

/** Counters from the dev server's Prometheus metrics, summed by `metric:operation`; empty without a port. */
export async function serverCounters(): Promise<Map<string, number>> {
  const port = process.env.KEEL_BENCH_METRICS_PORT;
  const counters = new Map<string, number>();
  if (port === undefined) return counters;
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  for (const line of text.split('\n')) {
    const match =
      /^(service_requests|persistence_requests|visibility_persistence_requests)\{(.*)\} ([0-9.e+]+)$/.exec(
        line,
      );
    if (match === null) continue;
    const operation = /operation="([^"]*)"/.exec(match[2]!)?.[1] ?? '?';
    const key = `${match[1]}:${operation}`;
    counters.set(key, (counters.get(key) ?? 0) + Number(match[3]));
  }
  return counters;
}

/** What changed between two readings, per `per` (turns), largest first, only what reached 0.05. */
export function countersPer(
  before: Map<string, number>,
  after: Map<string, number>,
  per: number,
): Record<string, number> {
  return Object.fromEntries(
    [...after]
      .map(([key, value]) => [key, (value - (before.get(key) ?? 0)) / per] as const)
      .filter(([, value]) => value >= 0.05)
      .sort((a, b) => b[1] - a[1])
      .map(([key, value]) => [key, Math.round(value * 100) / 100]),
  );
}
