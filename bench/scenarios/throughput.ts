/**
 * 3. Throughput: N conversations at once, each taking 5 turns that use a tool (model → bash →
 * model), through the API. Turns per second, turn latency, the worker's memory, and which
 * process was busy: where it saturates.
 */
import { randomUUID } from 'node:crypto';
import type { System } from '../harness';
import { progress } from '../progress';
import type { Row, ScenarioResult } from '../report';
import { mib, Sampler, type Usage } from '../sampler';
import { percentile, showSpread, spread } from '../stats';
import { turn } from '../turns';

export interface ThroughputOptions {
  concurrency: number[];
  turns: number;
  /** Trials per concurrency level. */
  trials: (concurrency: number) => number;
}

export interface Trial {
  turns_per_s: number;
  p50_ms: number;
  p95_ms: number;
  failed: number;
  /** Why turns failed: the run's error or the HTTP status, counted. */
  failures?: Record<string, number>;
  usage: Usage;
}

async function trial(system: System, conversations: number, turns: number): Promise<Trial> {
  const sampler = new Sampler({
    server: system.server.process.pid!,
    worker: system.worker.pid,
    api: system.api.pid,
    bench: process.pid,
  });
  await sampler.start();
  const load = await toolTurns(system.apiUrl, conversations, turns);
  return { ...load, usage: await sampler.stop() };
}

/**
 * The throughput workload: `conversations` threads at once through the API at `apiUrl`, each
 * taking `turns` turns that run a tool (model → bash → model). Shared with the cluster scenario.
 */
export async function toolTurns(
  apiUrl: string,
  conversations: number,
  turns: number,
): Promise<Omit<Trial, 'usage'>> {
  const latencies: number[] = [];
  let failed = 0;
  const failures: Record<string, number> = {};
  let done = 0;
  const total = conversations * turns;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: conversations }, async () => {
      const thread = `bench-load-${randomUUID()}`;
      for (let index = 0; index < turns; index++) {
        const result = await turn(apiUrl, thread, `run: true`).catch((error: unknown) => ({
          outcome: String(error),
          ms: 0,
        }));
        if (result.outcome === 'completed') latencies.push(result.ms);
        else {
          failed++;
          failures[result.outcome] = (failures[result.outcome] ?? 0) + 1;
        }
        progress.count(`${conversations} conversations, turns`, ++done, total);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return {
    turns_per_s: latencies.length / seconds,
    p50_ms: percentile(latencies, 0.5),
    p95_ms: percentile(latencies, 0.95),
    failed,
    failures,
  };
}

/** The process that used the most CPU, and whether the machine was near full. */
export function busiest(usage: Usage): string {
  const [name, top] = Object.entries(usage.processes).sort((a, b) => b[1].cpu_percent - a[1].cpu_percent)[0]!;
  const shares = Object.entries(usage.processes)
    .map(([process, value]) => `${process} ${value.cpu_percent.toFixed(0)}%`)
    .join(', ');
  return `machine ${usage.machine_busy_percent.toFixed(0)}% busy; busiest: ${name} (${top.cpu_percent.toFixed(0)}% of a core); ${shares}`;
}

export async function throughput(system: System, options: ThroughputOptions): Promise<ScenarioResult> {
  const rows: Row[] = [];
  const data: Record<string, unknown> = {};
  for (const conversations of options.concurrency) {
    const trials: Trial[] = [];
    for (let index = 0; index < options.trials(conversations); index++) {
      trials.push(await trial(system, conversations, options.turns));
    }
    const last = trials.at(-1)!;
    const rss = spread(trials.map((t) => t.usage.processes.worker!.peak_rss_bytes / 2 ** 20));
    rows.push(
      {
        scenario: rows.length === 0 ? '3 throughput' : '',
        metric: `${conversations} conversations × ${options.turns} tool turns: turns/s`,
        value: showSpread(spread(trials.map((t) => t.turns_per_s))),
        note: trials.some((t) => t.failed > 0)
          ? `${trials.reduce((sum, t) => sum + t.failed, 0)} turns failed`
          : '',
      },
      {
        scenario: '',
        metric: `  p50 / p95 turn latency, ms`,
        value: `${showSpread(spread(trials.map((t) => t.p50_ms)), 0)} / ${showSpread(spread(trials.map((t) => t.p95_ms)), 0)}`,
      },
      { scenario: '', metric: `  worker peak RSS, MiB`, value: showSpread(rss, 0) },
      {
        scenario: '',
        metric: `  CPU (last trial)`,
        value: `${last.usage.machine_busy_percent.toFixed(0)}% of machine`,
        note: busiest(last.usage),
      },
    );
    data[String(conversations)] = {
      turns_per_s: spread(trials.map((t) => t.turns_per_s)),
      p50_ms: spread(trials.map((t) => t.p50_ms)),
      p95_ms: spread(trials.map((t) => t.p95_ms)),
      worker_peak_rss_mib: rss,
      failed_turns: trials.map((t) => t.failed),
      failures: trials.map((t) => t.failures ?? {}),
      usage: trials.map((t) => t.usage),
    };
    progress.note(
      `${conversations} conversations: ${showSpread(spread(trials.map((t) => t.turns_per_s)))} turns/s, worker ${mib(last.usage.processes.worker!.peak_rss_bytes)}`,
    );
  }
  return { rows, data: { ...data, turns_per_conversation: options.turns } };
}
