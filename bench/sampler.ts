/**
 * Samples the CPU and memory of the system's processes while a scenario runs, so a figure comes
 * with what was busy: the Temporal server, the worker, the API or this benchmark's own client.
 */
import { readdir, readFile } from 'node:fs/promises';
import { processStats } from './harness';

export interface ProcessUsage {
  /** Average CPU over the window, in % of one core (200 % = both cores of a 2-core machine). */
  cpu_percent: number;
  peak_rss_bytes: number;
  last_rss_bytes: number;
}

export interface Usage {
  processes: Record<string, ProcessUsage>;
  /** The whole machine's CPU busy share over the window, 0–100 %. */
  machine_busy_percent: number;
  seconds: number;
}

async function machineTicks(): Promise<{ busy: number; total: number }> {
  const line = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!;
  const values = line.trim().split(/\s+/).slice(1).map(Number);
  const idle = values[3]! + (values[4] ?? 0);
  const total = values.reduce((sum, value) => sum + value, 0);
  return { busy: total - idle, total };
}

/**
 * CPU seconds of a process and every process below it (PostgreSQL's backends are children of its
 * postmaster): live descendants' own, plus what exited children left in their parents' counters.
 */
export async function treeCpuSeconds(root: number): Promise<number> {
  const rows: { pid: number; parent: number; ticks: number }[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => undefined);
    if (stat === undefined) continue;
    // After ")": state, ppid, …; utime, stime, cutime, cstime are fields 14–17.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = [11, 12, 13, 14].reduce((sum, index) => sum + Number(fields[index]), 0);
    rows.push({ pid: Number(name), parent: Number(fields[1]), ticks });
  }
  let total = 0;
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    for (const row of rows) {
      if (row.pid === pid) total += row.ticks;
      if (row.parent === pid) queue.push(row.pid);
    }
  }
  return total / 100;
}

export interface SamplerOptions {
  /** Names whose CPU includes every process below them (a PostgreSQL server). */
  trees?: string[];
}

export class Sampler {
  readonly #pids: Record<string, number>;
  readonly #trees: Set<string>;
  readonly #start = new Map<string, number>();
  readonly #peak = new Map<string, number>();
  readonly #last = new Map<string, number>();
  #startedAt = 0;
  #machine = { busy: 0, total: 0 };
  #timer: NodeJS.Timeout | undefined;

  constructor(pids: Record<string, number>, options: SamplerOptions = {}) {
    this.#pids = pids;
    this.#trees = new Set(options.trees ?? []);
  }

  async #cpuSeconds(name: string, pid: number): Promise<number> {
    if (this.#trees.has(name)) return treeCpuSeconds(pid);
    return (await processStats(pid))?.cpuS ?? 0;
  }

  async start(everyMs = 500): Promise<void> {
    this.#startedAt = performance.now();
    this.#machine = await machineTicks();
    for (const [name, pid] of Object.entries(this.#pids)) {
      const stats = await processStats(pid);
      this.#start.set(name, await this.#cpuSeconds(name, pid));
      this.#note(name, stats?.rssBytes ?? 0);
    }
    this.#timer = setInterval(() => void this.#sample(), everyMs);
  }

  #note(name: string, rss: number): void {
    this.#last.set(name, rss);
    this.#peak.set(name, Math.max(this.#peak.get(name) ?? 0, rss));
  }

  async #sample(): Promise<void> {
    for (const [name, pid] of Object.entries(this.#pids)) {
      const stats = await processStats(pid);
      if (stats !== undefined) this.#note(name, stats.rssBytes);
    }
  }

  async stop(): Promise<Usage> {
    clearInterval(this.#timer);
    await this.#sample();
    const seconds = (performance.now() - this.#startedAt) / 1000;
    const machine = await machineTicks();
    const processes: Record<string, ProcessUsage> = {};
    for (const [name, pid] of Object.entries(this.#pids)) {
      const cpu = (await this.#cpuSeconds(name, pid)) - (this.#start.get(name) ?? 0);
      processes[name] = {
        cpu_percent: (cpu / seconds) * 100,
        peak_rss_bytes: this.#peak.get(name) ?? 0,
        last_rss_bytes: this.#last.get(name) ?? 0,
      };
    }
    const busy = machine.busy - this.#machine.busy;
    const total = machine.total - this.#machine.total;
    return { processes, machine_busy_percent: total === 0 ? 0 : (busy / total) * 100, seconds };
  }
}

export const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
