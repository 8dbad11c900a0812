/**
 * The throughput workload (scenario 3's `toolTurns`: N conversations at once × tool turns through
 * `runs/wait`, each turn with `if_not_exists: "create"`) with CPU per turn of each process tree
 * (/proc), the API's Temporal calls per turn by method, and with the dev server's metrics on, the
 * server's requests and persistence operations per turn. Decisions 0300–0302.
 *
 *   npx tsx bench/throughput-cpu.ts [conversations=100] [turns=5]
 *   KEEL_BENCH_DEV_SERVER_ARGS='--metrics-port 19091' KEEL_BENCH_METRICS_PORT=19091 npx tsx bench/throughput-cpu.ts
 */
import os from 'node:os';
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import { startSystem } from './harness';
import { cpuOf } from './peer/process-tree';
import { serverCounters } from './server-metrics';
import { toolTurns } from './scenarios/throughput';

async function main(): Promise<void> {
  const conversations = Number(process.argv[2] ?? 100);
  const turns = Number(process.argv[3] ?? 5);
  const countFile = path.join(os.tmpdir(), `keel-bench-grpc-calls-${process.pid}.json`);
  const system = await startSystem({
    env: { KEEL_BENCH_GRPC_CALLS_FILE: countFile },
    nodeArgs: { api: ['--import', 'tsx', '--import', path.join(__dirname, 'grpc-call-counter.ts')] },
  });
  const roots = { server: system.server.process.pid!, worker: system.worker.pid, api: system.api.pid };
  try {
    await toolTurns(system.apiUrl, 5, 2); // warm up
    await new Promise((r) => setTimeout(r, 1500));
    const countsBefore = JSON.parse(await readFile(countFile, 'utf8')) as Record<string, number>;
    const serverBefore = await serverCounters();
    const before = await cpuOf(roots);
    const benchBefore = process.cpuUsage();
    const load = os.loadavg()[0]!;
    const result = await toolTurns(system.apiUrl, conversations, turns);
    const after = await cpuOf(roots);
    const serverAfter = await serverCounters();
    const bench = process.cpuUsage(benchBefore);
    await new Promise((r) => setTimeout(r, 1500));
    const countsAfter = JSON.parse(await readFile(countFile, 'utf8')) as Record<string, number>;
    const n = conversations * turns;
    const cpu = Object.fromEntries(Object.keys(roots).map((k) => [k, ((after[k]! - before[k]!) * 1000) / n]));
    const total = Object.values(cpu).reduce((a, b) => a + b, 0);
    console.log(
      `${conversations}×${turns}: ${result.turns_per_s.toFixed(1)} turns/s p50 ${result.p50_ms.toFixed(0)} p95 ${result.p95_ms.toFixed(0)} failed ${result.failed} load ${load.toFixed(2)}→${os.loadavg()[0]!.toFixed(2)}`,
    );
    console.log(
      `CPU ms/turn: ${Object.entries(cpu)
        .map(([k, v]) => `${k} ${v.toFixed(1)}`)
        .join(
          ', ',
        )}, total ${total.toFixed(1)}, bench ${((bench.user + bench.system) / 1000 / n).toFixed(1)}`,
    );
    const calls = Object.entries(countsAfter)
      .map(([k, v]) => [k, (v - (countsBefore[k] ?? 0)) / n] as const)
      .filter(([, v]) => v > 0);
    for (const metric of serverAfter.size === 0
      ? []
      : ['service_requests', 'persistence_requests', 'visibility_persistence_requests'])
      console.log(
        `server ${metric} per turn: ${[...serverAfter]
          .filter(([key]) => key.startsWith(`${metric}:`))
          .map(
            ([key, value]) =>
              [key.slice(metric.length + 1), (value - (serverBefore.get(key) ?? 0)) / n] as const,
          )
          .filter(([, value]) => value >= 0.05)
          .sort((a, b) => b[1] - a[1])
          .map(([key, value]) => `${key} ${value.toFixed(2)}`)
          .join(', ')}`,
      );
    console.log(`API gRPC calls per turn: ${calls.map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ')}`);
  } finally {
    await system.stop();
  }
}
void main();
