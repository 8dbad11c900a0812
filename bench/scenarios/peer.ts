/**
 * 11. The peer, side by side: LangGraph's Agent Server (`langgraph dev`, in memory) and Keel, one
 * after the other, each running a tool-calling agent against the same fake Anthropic server and
 * driven by the same client (LangGraph's JS SDK, `runs.wait`) with the same workload: tool turns
 * (the model asks for `bash: echo hi`, the tool runs, the model answers) in one thread one after
 * the other, then in 20 threads at once. Per side: client latency, server-side queue and execution
 * time, CPU of every server-side process per turn, turns/s; for Keel also the history events each
 * turn writes (decision 0151 says how each figure is taken).
 */
import { type FakeAnthropic, toolUsingResponder } from '../../test/fakes/anthropic-server';
import { freePort, startSystem, until } from '../harness';
import { type KeelTurnRecord, keelTurns } from '../peer/keel-history';
import { defaultJobs, type LanggraphRunRecord, startLanggraphServer } from '../peer/langgraph-server';
import { progress } from '../progress';
import type { Row, ScenarioResult } from '../report';
import { showSpread, spread } from '../stats';
import {
  type Execution,
  oneTurn,
  p50p95,
  type PeerOptions,
  serverTimes,
  type Side,
  workload,
} from '../peer/workload';

const model = 'claude-sonnet-4-5';
const anthropicKey = 'test-key';

async function langgraphSide(fake: FakeAnthropic, options: PeerOptions): Promise<Side> {
  progress.note(`LangGraph: langgraph dev (in memory, ${defaultJobs} jobs at once), venv built once`);
  const server = await startLanggraphServer({
    anthropicUrl: fake.url,
    anthropicKey,
    port: await freePort(),
    onProgress: (line) => progress.note(line),
  });
  try {
    const { sequential, concurrent } = await workload(
      server.url,
      'LangGraph',
      { langgraph: server.pid },
      options,
    );
    // The server logs a run's end a moment after it answers the wait.
    await until(
      () => Promise.resolve(server.runs.length >= 1 + sequential.turns + concurrent.turns),
      30_000,
      "LangGraph's log of every run",
    );
    const executionsOf = (threadId: string) =>
      Promise.resolve(
        server.runs
          .filter((run: LanggraphRunRecord) => run.thread_id === threadId)
          .map((run) => ({
            started_ms: run.started_ms,
            ended_ms: run.ended_ms,
            own_queue_ms: run.started_ms - run.created_ms,
          })),
      );
    return {
      sequential: { ...sequential, server: await serverTimes(sequential, executionsOf) },
      concurrent: { ...concurrent, server: await serverTimes(concurrent, executionsOf) },
    };
  } finally {
    await server.stop();
  }
}

interface KeelSide extends Side {
  events: { tool_turn: number[]; plain_turn: number[]; first_turn: number[] };
  /** Tool turns whose input the API also sent by signal (its update not answered in 250 ms). */
  by_signal: number;
  plain_latency_ms: { p50: number; p95: number };
}

async function keelSide(fake: FakeAnthropic, options: PeerOptions): Promise<KeelSide> {
  progress.note(`Keel: a fresh dev server, worker and API, model anthropic:${model} (the fake)`);
  const system = await startSystem({
    env: {
      KEEL_MODEL: `anthropic:${model}`,
      ANTHROPIC_API_KEY: anthropicKey,
      ANTHROPIC_BASE_URL: fake.url,
    },
  });
  try {
    const roots = { server: system.server.process.pid!, worker: system.worker.pid, api: system.api.pid };
    const { client, sequential, concurrent } = await workload(system.apiUrl, 'Keel', roots, options);
    const plain = (await client.threads.create()).thread_id;
    const plainLatencies: number[] = [];
    for (let index = 0; index < options.plainTurns; index++)
      plainLatencies.push(await oneTurn(client, plain, `hello ${index}`, 'You said'));
    const toolRecords: KeelTurnRecord[] = [];
    const executionsOf = async (threadId: string): Promise<Execution[]> => {
      const records = await keelTurns(system.client, threadId);
      toolRecords.push(...records);
      return records.map((record) => ({
        started_ms: record.started_ms,
        ended_ms: record.completed_ms,
        own_queue_ms: record.started_ms - record.scheduled_ms,
      }));
    };
    const sequentialTimes = await serverTimes(sequential, executionsOf);
    const concurrentTimes = await serverTimes(concurrent, executionsOf);
    const plainRecords = await keelTurns(system.client, plain);
    return {
      sequential: { ...sequential, server: sequentialTimes },
      concurrent: { ...concurrent, server: concurrentTimes },
      events: {
        tool_turn: toolRecords.filter((record) => !record.first).map((record) => record.events),
        plain_turn: plainRecords.filter((record) => !record.first).map((record) => record.events),
        first_turn: [...toolRecords, ...plainRecords]
          .filter((record) => record.first)
          .map((record) => record.events),
      },
      by_signal: toolRecords.filter((record) => !record.first && record.by === 'signal').length,
      plain_latency_ms: p50p95(plainLatencies),
    };
  } finally {
    await system.stop();
  }
}

const f = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : '—');
const vs = (keel: string, langgraph: string) => `${keel} vs ${langgraph}`;
const both = (value: { p50: number; p95: number }) => `${f(value.p50)} / ${f(value.p95)}`;
const ratio = (keel: number, langgraph: number) => `Keel / LangGraph ${(keel / langgraph).toFixed(2)}×`;

function phaseRows(name: string, keel: Side['sequential'], langgraph: Side['sequential']): Row[] {
  const keelCpu = keel.cpu_ms_per_turn;
  const langgraphCpu = langgraph.cpu_ms_per_turn.total!;
  return [
    {
      scenario: '',
      metric: `${name}: client latency p50 / p95, ms`,
      value: vs(both(keel.latency_ms), both(langgraph.latency_ms)),
      note: `${keel.turns} vs ${langgraph.turns} tool turns; p50 ${ratio(keel.latency_ms.p50, langgraph.latency_ms.p50)}`,
    },
    {
      scenario: '',
      metric: '  request sent → execution starts, p50 / p95, ms',
      value: vs(both(keel.server.before_ms), both(langgraph.server.before_ms)),
      note: `the server's own queue p50: ${f(keel.server.own_queue_ms.p50)} vs ${f(langgraph.server.own_queue_ms.p50)} ms`,
    },
    {
      scenario: '',
      metric: '  server-side execution p50 / p95, ms',
      value: vs(both(keel.server.exec_ms), both(langgraph.server.exec_ms)),
      note: `p50 ${ratio(keel.server.exec_ms.p50, langgraph.server.exec_ms.p50)}`,
    },
    {
      scenario: '',
      metric: '  execution ends → answer at the client, p50 / p95, ms',
      value: vs(both(keel.server.after_ms), both(langgraph.server.after_ms)),
    },
    {
      scenario: '',
      metric: '  server CPU per turn, ms (all processes)',
      value: vs(f(keelCpu.total!, 1), f(langgraphCpu, 1)),
      note: `Keel: server ${f(keelCpu.server!, 1)}, worker ${f(keelCpu.worker!, 1)}, api ${f(keelCpu.api!, 1)}; ${ratio(keelCpu.total!, langgraphCpu)}`,
    },
    {
      scenario: '',
      metric: '  turns/s',
      value: vs(f(keel.turns_per_s, 1), f(langgraph.turns_per_s, 1)),
      note: `machine busy ${f(keel.machine_busy_percent)} % vs ${f(langgraph.machine_busy_percent)} %, load ${f(keel.load_average[1], 1)} vs ${f(langgraph.load_average[1], 1)}`,
    },
  ];
}

export async function peer(fake: FakeAnthropic, options: PeerOptions): Promise<ScenarioResult> {
  fake.setResponder(toolUsingResponder);
  const violationsBefore = fake.violations.length;
  const langgraph = await langgraphSide(fake, options);
  const keel = await keelSide(fake, options);
  if (fake.violations.length > violationsBefore)
    throw new Error(`the fake model saw a broken transcript: ${fake.violations.at(-1)}`);
  const toolEvents = spread(keel.events.tool_turn);
  const plainEvents = spread(keel.events.plain_turn);
  const strip = ({ sent: _sent, ...rest }: Side['sequential']) => rest;
  return {
    rows: [
      {
        scenario: '11 peer',
        metric: 'each value: Keel vs LangGraph (langgraph dev)',
        value: 'Keel vs LangGraph',
        note: `same fake Anthropic server, LangGraph JS SDK runs.wait, tool turn = model → bash → model`,
      },
      ...phaseRows('sequential', keel.sequential, langgraph.sequential),
      ...phaseRows(`${options.threads} threads at once`, keel.concurrent, langgraph.concurrent),
      {
        scenario: '',
        metric: 'Keel history events per tool turn',
        value: showSpread(toolEvents, 0),
        note: `${toolEvents.n} turns from real histories (${keel.by_signal} of them also sent by signal); target ≤ 15`,
      },
      {
        scenario: '',
        metric: 'Keel history events per plain turn',
        value: showSpread(plainEvents, 0),
        note: `${plainEvents.n} turns; target ≤ 8; plain turn p50 ${f(keel.plain_latency_ms.p50)} ms`,
      },
      {
        scenario: '',
        metric: 'persisted per step',
        value: 'every event vs nothing',
        note: "Keel: Temporal's SQLite (WAL, synchronous FULL); LangGraph dev: memory, pickled every 10 s",
      },
    ],
    data: {
      keel: {
        sequential: strip(keel.sequential),
        concurrent: strip(keel.concurrent),
        plain_latency_ms: keel.plain_latency_ms,
        events_per_tool_turn: toolEvents,
        events_per_plain_turn: plainEvents,
        events_first_turn: spread(keel.events.first_turn),
        tool_turns_by_signal: keel.by_signal,
      },
      langgraph: {
        sequential: strip(langgraph.sequential),
        concurrent: strip(langgraph.concurrent),
        jobs: defaultJobs,
      },
      ...options,
    },
  };
}
