/**
 * The peer benchmark's workload, the same against either server through LangGraph's JS SDK: tool
 * turns (`run: echo hi` → bash → answer) in one thread one after the other, then in many threads
 * at once; client latency, CPU of the server's process trees, and each turn's time before,
 * during and after its execution on the server (decision 0151).
 */
import os from 'node:os';
import { Client as SdkClient } from '@langchain/langgraph-sdk';
import { progress } from '../progress';
import { Sampler } from '../sampler';
import { percentile } from '../stats';
import { cpuOf } from './process-tree';

export interface PeerOptions {
  /** Tool turns in one thread, one after the other. */
  sequentialTurns: number;
  /** Threads at once, each taking `turnsPerThread` tool turns one after the other. */
  threads: number;
  turnsPerThread: number;
  /** Keel only: plain turns (no tool) in one thread, to count their history events. */
  plainTurns: number;
}

const toolTurnText = 'run: echo hi';
const assistantId = 'agent';

export interface Phase {
  turns: number;
  seconds: number;
  turns_per_s: number;
  latency_ms: { p50: number; p95: number };
  /** CPU milliseconds per turn of each server-side process tree, and their total. */
  cpu_ms_per_turn: Record<string, number>;
  machine_busy_percent: number;
  /** The machine's 1-minute load average when the phase began and ended (other work shares it). */
  load_average: [number, number];
  /** This benchmark's own process (the SDK client and the fake model server) per turn. */
  bench_cpu_ms_per_turn: number;
  /** Each thread's turns in order: when the request was sent and the answer arrived (epoch ms). */
  sent: Map<string, Array<{ sent_ms: number; answered_ms: number }>>;
}

/** When a turn's execution started and ended on the server, and what the server says it queued. */
export interface Execution {
  started_ms: number;
  ended_ms: number;
  /** The server's own queue figure (LangGraph: run created → started; Keel: task scheduled → started). */
  own_queue_ms: number;
}

export interface ServerTimes {
  /** Request sent → the agent's execution started: HTTP, the API's work and any queue. */
  before_ms: { p50: number; p95: number };
  exec_ms: { p50: number; p95: number };
  /** Execution ended → the answer reached the client. */
  after_ms: { p50: number; p95: number };
  own_queue_ms: { p50: number; p95: number };
}

export interface Side {
  sequential: Phase & { server: ServerTimes };
  concurrent: Phase & { server: ServerTimes };
}

/** The final answer's text of a `runs.wait` answer (LangChain-shaped messages). */
function answerOf(values: unknown): string {
  const messages = (values as { messages?: Array<{ type?: string; content?: unknown }> }).messages ?? [];
  const last = messages.at(-1);
  if (last?.type !== 'ai') return '';
  return typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
}

export async function oneTurn(
  client: SdkClient,
  threadId: string,
  text: string,
  expect: string,
): Promise<number> {
  const started = performance.now();
  const values = await client.runs.wait(threadId, assistantId, {
    input: { messages: [{ role: 'user', content: text }] },
  });
  const ms = performance.now() - started;
  const answer = answerOf(values);
  if (!answer.includes(expect))
    throw new Error(`thread ${threadId}: the turn ended without "${expect}": ${answer.slice(0, 200)}`);
  return ms;
}

/** Runs `turns` tool turns in each of `threads` new threads at once, measuring the server's processes. */
async function phase(
  client: SdkClient,
  roots: Record<string, number>,
  what: string,
  threads: number,
  turns: number,
): Promise<Phase> {
  const threadIds = await Promise.all(
    Array.from({ length: threads }, async () => (await client.threads.create()).thread_id),
  );
  const latencies: number[] = [];
  const sent = new Map(
    threadIds.map((threadId) => [threadId, [] as Array<{ sent_ms: number; answered_ms: number }>]),
  );
  const total = threads * turns;
  const sampler = new Sampler({ bench: process.pid });
  await sampler.start();
  const before = await cpuOf(roots);
  const loadBefore = os.loadavg()[0]!;
  const started = performance.now();
  await Promise.all(
    threadIds.map(async (threadId) => {
      for (let index = 0; index < turns; index++) {
        const sentMs = Date.now();
        latencies.push(await oneTurn(client, threadId, toolTurnText, 'Result:'));
        sent.get(threadId)!.push({ sent_ms: sentMs, answered_ms: Date.now() });
        progress.count(what, latencies.length, total);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const after = await cpuOf(roots);
  const usage = await sampler.stop();
  const cpu: Record<string, number> = {};
  for (const name of Object.keys(roots)) cpu[name] = ((after[name]! - before[name]!) * 1000) / total;
  cpu.total = Object.values(cpu).reduce((sum, value) => sum + value, 0);
  return {
    turns: total,
    seconds,
    turns_per_s: total / seconds,
    latency_ms: { p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95) },
    cpu_ms_per_turn: cpu,
    machine_busy_percent: usage.machine_busy_percent,
    load_average: [loadBefore, os.loadavg()[0]!],
    bench_cpu_ms_per_turn: ((usage.processes.bench!.cpu_percent / 100) * seconds * 1000) / total,
    sent,
  };
}

export const p50p95 = (values: number[]) => ({ p50: percentile(values, 0.5), p95: percentile(values, 0.95) });

/** Joins each thread's turns, in order, with the server's record of their execution. */
export async function serverTimes(
  phase: Phase,
  executionsOf: (threadId: string) => Promise<Execution[]>,
): Promise<ServerTimes> {
  const before: number[] = [];
  const exec: number[] = [];
  const after: number[] = [];
  const ownQueue: number[] = [];
  for (const [threadId, turns] of phase.sent) {
    const executions = await executionsOf(threadId);
    if (executions.length !== turns.length)
      throw new Error(
        `thread ${threadId}: ${turns.length} turns sent, ${executions.length} recorded by the server`,
      );
    for (const [index, turn] of turns.entries()) {
      const execution = executions[index]!;
      before.push(execution.started_ms - turn.sent_ms);
      exec.push(execution.ended_ms - execution.started_ms);
      after.push(turn.answered_ms - execution.ended_ms);
      ownQueue.push(execution.own_queue_ms);
    }
  }
  return {
    before_ms: p50p95(before),
    exec_ms: p50p95(exec),
    after_ms: p50p95(after),
    own_queue_ms: p50p95(ownQueue),
  };
}

/** The same workload against either server: a warm-up turn, then the sequential and concurrent phases. */
export async function workload(
  apiUrl: string,
  side: string,
  roots: Record<string, number>,
  options: PeerOptions,
) {
  const client = new SdkClient({ apiUrl, apiKey: null, callerOptions: { maxRetries: 0 } });
  const warm = (await client.threads.create()).thread_id;
  await oneTurn(client, warm, toolTurnText, 'Result:');
  const sequential = await phase(client, roots, `${side}, sequential tool turns`, 1, options.sequentialTurns);
  const concurrent = await phase(
    client,
    roots,
    `${side}, ${options.threads} threads at once, tool turns`,
    options.threads,
    options.turnsPerThread,
  );
  return { client, sequential, concurrent };
}
