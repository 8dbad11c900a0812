/**
 * Where a tool turn's CPU goes: the peer benchmark's Keel side (tool turns `run: echo hi` through
 * the API's `runs/wait`, the fake Anthropic server) with the worker and the API under
 * `node --cpu-prof`, then the samples taken while the timed turns ran, per turn: self and
 * inclusive time by function and self time by package. Also the CPU of each process tree from
 * /proc, as the peer benchmark counts it. Decision 0240.
 *
 *   KEEL_LOCAL_MODEL_CALLS=1 npx tsx bench/profile-turns.ts --turns 100 --per-thread 10
 *     [--no-profile] [--keep DIR] [--top 40] [--worker-node-args '--require ./experiment.js']
 *
 * The timed turns' samples are picked by time: V8's profile clock and `process.hrtime` are both
 * the monotonic clock, in the same units once divided.
 */
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { Client as SdkClient } from '@langchain/langgraph-sdk';
import { startFakeAnthropic, toolUsingResponder } from '../test/fakes/anthropic-server';
import { processStats, startSystem } from './harness';
import { oneTurn } from './peer/workload';
import { cpuOf } from './peer/process-tree';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** The package (or our folder) a script belongs to. */
function packageOf(url: string): string {
  if (url === '') return '(native/vm)';
  if (url.startsWith('node:')) return 'node:internal';
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) {
    const parts = url.slice(modules + 'node_modules/'.length).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  if (url.includes('workflow-bundle')) return 'workflow bundle';
  const file = url.replace(/^file:\/\//, '');
  const relative = path.relative(path.resolve(__dirname, '..'), file);
  return relative.startsWith('..') ? file : `keel:${relative.split(path.sep)[0]}`;
}

const keyOf = (frame: CallFrame): string =>
  `${frame.functionName || '(anonymous)'} ${frame.url === '' ? '' : `${path.basename(frame.url)}:${frame.lineNumber + 1}`}`;

/** Self and inclusive µs by function, self µs by package, over samples between `from` and `to` (µs). */
export function summarize(profile: CpuProfile, from: number, to: number) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const packages = new Map<string, number>();
  let total = 0;
  let time = profile.startTime;
  for (let index = 0; index < profile.samples.length; index++) {
    time += profile.timeDeltas[index]!;
    const delta = profile.timeDeltas[index + 1] ?? 0;
    if (time < from || time > to) continue;
    const node = byId.get(profile.samples[index]!)!;
    if (node.callFrame.functionName === '(idle)') continue;
    total += delta;
    const add = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + delta);
    add(self, keyOf(node.callFrame));
    add(packages, packageOf(node.callFrame.url));
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const key = keyOf(byId.get(id)!.callFrame);
      if (seen.has(key)) continue;
      seen.add(key);
      add(inclusive, key);
    }
  }
  return { total, self, inclusive, packages };
}

function print(title: string, map: Map<string, number>, turns: number, top: number): void {
  console.log(`\n  ${title}`);
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`  ${(us / 1000 / turns).toFixed(2).padStart(8)} ms  ${key}`);
}

/** CPU ticks by thread name of one process (threads of one name summed), and its waited-for children. */
async function threadTicks(pid: number): Promise<Map<string, number>> {
  const ticks = new Map<string, number>();
  for (const task of await readdir(`/proc/${pid}/task`)) {
    const stat = await readFile(`/proc/${pid}/task/${task}/stat`, 'utf8').catch(() => '');
    if (stat === '') continue;
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    // Node names its JavaScript threads alike: the main thread is the one whose id is the process's.
    const name = task === String(pid) ? `${comm} (main thread)` : comm === 'node' ? `node ${task}` : comm;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks.set(name, (ticks.get(name) ?? 0) + Number(fields[11]) + Number(fields[12]));
  }
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  ticks.set('(children: bash, bwrap)', Number(fields[13]) + Number(fields[14]));
  return ticks;
}

function perTurn(before: Map<string, number>, after: Map<string, number>, turns: number) {
  return Object.fromEntries(
    [...after].map(([name, ticks]) => [name, ((ticks - (before.get(name) ?? 0)) * 10) / turns]),
  );
}

async function main(): Promise<void> {
  const options = new Command()
    .option('--turns <n>', 'timed tool turns', '60')
    .option('--per-thread <n>', 'tool turns per thread before a new one (the peer benchmark: 10)', '0')
    .option('--top <n>', 'rows per table', '40')
    .option('--keep <dir>', 'where the .cpuprofile files go')
    .option('--worker-node-args <args>', 'more node options for the worker, space-separated', '')
    .option('--no-profile', 'CPU from /proc only, without the profiler (which costs CPU itself)')
    .parse(process.argv)
    .opts<{
      turns: string;
      perThread: string;
      top: string;
      keep?: string;
      profile: boolean;
      workerNodeArgs: string;
    }>();
  const turns = Number(options.turns);
  const top = Number(options.top);
  const dir = options.keep ?? (await mkdtemp(path.join(os.tmpdir(), 'keel-profile-')));
  await mkdir(dir, { recursive: true });
  const fake = await startFakeAnthropic({ responder: toolUsingResponder });
  const model = 'claude-sonnet-4-5';
  const profileArgs = (name: string) => ['--cpu-prof', `--cpu-prof-dir=${path.join(dir, name)}`];
  const system = await startSystem({
    env: { KEEL_MODEL: `anthropic:${model}`, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url },
    nodeArgs: {
      worker: [
        ...(options.profile ? profileArgs('worker') : []),
        ...options.workerNodeArgs.split(' ').filter(Boolean),
      ],
      api: options.profile ? profileArgs('api') : [],
    },
  });
  const roots = { server: system.server.process.pid!, worker: system.worker.pid, api: system.api.pid };
  let window: [number, number];
  let threads: Record<string, Record<string, number>>;
  try {
    const client = new SdkClient({ apiUrl: system.apiUrl, apiKey: null, callerOptions: { maxRetries: 0 } });
    const warm = (await client.threads.create()).thread_id;
    for (let index = 0; index < 5; index++) await oneTurn(client, warm, 'run: echo hi', 'Result:');
    const perThread = Number(options.perThread) || turns;
    const threadIds: string[] = [];
    for (let index = 0; index < Math.ceil(turns / perThread); index++)
      threadIds.push((await client.threads.create()).thread_id);
    const before = await cpuOf(roots);
    const threadsBefore = await Promise.all([threadTicks(roots.worker), threadTicks(roots.api)]);
    const load = os.loadavg()[0]!;
    const from = Number(process.hrtime.bigint() / 1000n);
    const latencies: number[] = [];
    for (let index = 0; index < turns; index++)
      latencies.push(
        await oneTurn(client, threadIds[Math.floor(index / perThread)]!, 'run: echo hi', 'Result:'),
      );
    window = [from, Number(process.hrtime.bigint() / 1000n)];
    const after = await cpuOf(roots);
    const threadsAfter = await Promise.all([threadTicks(roots.worker), threadTicks(roots.api)]);
    threads = Object.fromEntries(
      ['worker', 'api'].map((name, index) => [
        name,
        perTurn(threadsBefore[index]!, threadsAfter[index]!, turns),
      ]),
    );
    const cpu = Object.fromEntries(
      Object.keys(roots).map((name) => [name, ((after[name]! - before[name]!) * 1000) / turns]),
    );
    latencies.sort((a, b) => a - b);
    const rss = await Promise.all([processStats(roots.worker), processStats(roots.api)]);
    console.log(
      `RSS after the turns: worker ${((rss[0]?.rssBytes ?? 0) / 2 ** 20).toFixed(0)} MiB, api ${((rss[1]?.rssBytes ?? 0) / 2 ** 20).toFixed(0)} MiB`,
    );
    await writeFile(path.join(dir, 'window.json'), JSON.stringify({ from: window[0], to: window[1], turns }));
    console.log(
      `${turns} tool turns, p50 ${latencies[Math.floor(turns / 2)]!.toFixed(1)} ms, load average ${load.toFixed(2)} → ${os.loadavg()[0]!.toFixed(2)}`,
    );
    console.log(
      `CPU per turn (/proc, process trees): ${Object.entries(cpu)
        .map(([name, ms]) => `${name} ${ms.toFixed(1)}`)
        .join(', ')} ms; total ${Object.values(cpu)
        .reduce((sum, ms) => sum + ms, 0)
        .toFixed(1)} ms`,
    );
  } finally {
    await system.stop();
    await fake.close();
  }
  for (const name of ['worker', 'api']) {
    console.log(`\n${name}: CPU per turn by thread (/proc), ms`);
    for (const [thread, ms] of Object.entries(threads[name]!).sort((a, b) => b[1] - a[1]))
      if (ms >= 0.1) console.log(`  ${ms.toFixed(1).padStart(8)}  ${thread}`);
    if (!options.profile) continue;
    // One profile per JavaScript thread: the main thread, the workflow threads, tsx's loader.
    for (const file of (await readdir(path.join(dir, name))).filter((entry) =>
      entry.endsWith('.cpuprofile'),
    )) {
      const profile = JSON.parse(await readFile(path.join(dir, name, file), 'utf8')) as CpuProfile;
      const summary = summarize(profile, window[0], window[1]);
      if (summary.total / 1000 / turns < 0.5) continue;
      console.log(
        `\n${name}: ${(summary.total / 1000 / turns).toFixed(1)} ms of JS samples per turn (${path.join(dir, name, file)})`,
      );
      print('self time by package, per turn', summary.packages, turns, top);
      print('self time by function, per turn', summary.self, turns, top);
      print('inclusive time by function, per turn', summary.inclusive, turns, top);
    }
  }
}

if (require.main === module)
  void main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
