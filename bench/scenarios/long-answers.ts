/**
 * 13. Long answers (issue 30): a realistic model server — Anthropic's streaming format through the
 * real SDK, a first-token delay, then ~50 tokens/s for 400–800 tokens — answering N conversations
 * at once, each a client streaming its run (`POST /threads/:id/runs/stream`). The same workload
 * runs three ways in one run: the answers given at once (the floor), the live channel (decision
 * 0340), and `KEEL_TOKEN_CHANNEL=history` (decision 0041, the channel before it). Per answer: history
 * events and bytes (every run of the thread's chain), signals and search-attribute writes, CPU of
 * each process, turns/s and time to first token.
 */
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import { temporal } from '@temporalio/proto';
import type { Client } from '@temporalio/client';
import { workflowIdFor } from '../../common/thread';
import type { FakeAnthropic, FakeRequest } from '../../test/fakes/anthropic-server';
import type { System } from '../harness';
import { cpuOf } from '../peer/process-tree';
import { progress } from '../progress';
import type { Row, ScenarioResult } from '../report';
import { countersPer, serverCounters } from '../server-metrics';
import { percentile } from '../stats';
import { readSse } from './token-latency';

export interface LongAnswersOptions {
  concurrency: number[];
  /** Answers each conversation asks for, one after another, at a concurrency. */
  answers: (conversations: number) => number;
  /** Milliseconds between tokens (20 = 50 tokens/s). */
  tokenDelayMs: number;
  /** Milliseconds before the first token. */
  firstTokenDelayMs: number;
  /** Tokens per answer, evenly spread over [min, max]. */
  tokens: { min: number; max: number };
}

/** `instant`: the same answers with no delays (live channel); the others stream in real time. */
const modes = ['instant', 'live', 'history'] as const;
type Mode = (typeof modes)[number];

interface Answer {
  ok: boolean;
  /** From the request to the first text delta reaching the client. */
  ttftMs?: number;
  /** From the model server sending the first token to the client receiving it. */
  addedMs?: number;
}

interface HistoryCounts {
  events: number;
  bytes: number;
  signals: number;
  upserts: number;
  runs: number;
}

export interface LongAnswersTrial {
  mode: Mode;
  conversations: number;
  answers: number;
  failed: number;
  seconds: number;
  turns_per_s: number;
  ttft_ms: { p50: number; p95: number };
  added_first_token_ms: { p50: number; p95: number };
  /** Milliseconds of CPU per answer, by process (and its children). */
  cpu_ms_per_answer: Record<string, number>;
  /**
   * The server's CPU per answer less what it burns idle over the same seconds (measured just
   * before, with the worker and API connected): a long answer keeps a slow machine's idle cost.
   */
  server_busy_ms_per_answer: number;
  per_answer: { events: number; bytes: number; signals: number; upserts: number };
  /** The server's requests and persistence operations per answer (with `KEEL_BENCH_METRICS_PORT`). */
  server_operations_per_answer: Record<string, number>;
  load_before: number;
}

/** The text a model call asked for in `content` streams back: `tokens` words. */
const answerText = (tokens: number) =>
  Array.from({ length: tokens }, (_, index) => `w${index % 1000}`).join(' ');

/** The last user message's text (the benchmark sends plain strings). */
function askedOf(request: FakeRequest): string {
  const last = request.messages.at(-1)?.content;
  return typeof last === 'string'
    ? last
    : ((last?.find((block) => block.type === 'text') as { text?: string } | undefined)?.text ?? '');
}

/** Streams one run in Keel's native events, timing its first text delta. */
async function streamAnswer(
  apiUrl: string,
  threadId: string,
  content: string,
  firstSent: Map<string, number>,
): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(`${apiUrl}/threads/${threadId}/runs/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      if_not_exists: 'create',
      stream_mode: 'keel',
      config: { model: 'anthropic:claude-sonnet-4-5' },
      input: { messages: [{ role: 'user', content }] },
    }),
  });
  if (!response.ok) return { ok: false };
  let firstAt: number | undefined;
  let outcome = '';
  await readSse(response, (event, data, at) => {
    if (event === 'message.delta' && firstAt === undefined) {
      const text = (JSON.parse(data) as { text?: string }).text ?? '';
      if (text !== '') firstAt = at;
    }
    if (event?.startsWith('run.') === true) outcome = event;
    return event === 'end';
  });
  const sent = firstSent.get(content);
  return {
    ok: outcome === 'run.completed',
    ...(firstAt === undefined ? {} : { ttftMs: firstAt - started }),
    ...(firstAt === undefined || sent === undefined ? {} : { addedMs: firstAt - sent }),
  };
}

/** Events, bytes, signals and search-attribute writes of every run of a thread's workflow. */
async function historyCounts(client: Client, threadId: string): Promise<HistoryCounts> {
  const counts: HistoryCounts = { events: 0, bytes: 0, signals: 0, upserts: 0, runs: 0 };
  const workflowId = workflowIdFor(threadId);
  let runId: string | undefined;
  // The newest run first, then each run it continued (the test server suggests continue-as-new
  // early; a real one after 1,500 events: a history-channel thread hands over within a few answers).
  for (;;) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const events = history.events ?? [];
    counts.runs++;
    counts.events += events.length;
    counts.bytes += temporal.api.history.v1.History.encode(history).finish().length;
    for (const event of events) {
      if (event.workflowExecutionSignaledEventAttributes) counts.signals++;
      const upserted = event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
      // TemporalChangeVersion is the SDK's own record of patches (once per run), not Keel's view.
      if (upserted && Object.keys(upserted).some((key) => key.startsWith('Keel'))) counts.upserts++;
    }
    const previous = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
    if (previous === undefined || previous === null || previous === '') return counts;
    runId = previous;
  }
}

/** Server CPU seconds per second while nothing runs (pollers connected): its idle cost. */
async function idleServerCpu(system: System, seconds = 5): Promise<number> {
  const pid = system.server.process.pid!;
  const before = await cpuOf({ server: pid });
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const after = await cpuOf({ server: pid });
  return (after.server! - before.server!) / seconds;
}

/** Makes the system's worker one that streams on `channel` (a fresh process). */
async function useChannel(system: System, channel: 'live' | 'history'): Promise<void> {
  await system.worker.stop();
  await system.startWorker({ KEEL_TOKEN_CHANNEL: channel });
}

async function trial(
  system: System,
  fake: FakeAnthropic,
  mode: Mode,
  conversations: number,
  answers: number,
  options: LongAnswersOptions,
  idleServerCpuPerS: number,
): Promise<LongAnswersTrial> {
  const firstSent = new Map<string, number>();
  const span = options.tokens.max - options.tokens.min;
  fake.setResponder((request, index) => {
    const asked = askedOf(request);
    // Spread evenly by golden-ratio steps, the same lengths in every mode.
    const tokens = options.tokens.min + Math.round(((index * 0.618034) % 1) * span);
    return {
      kind: 'message',
      content: [{ type: 'text', text: answerText(tokens) }],
      usage: { output_tokens: tokens },
      ...(mode === 'instant'
        ? {}
        : { tokenDelayMs: options.tokenDelayMs, firstTokenDelayMs: options.firstTokenDelayMs }),
      onSent: () => {
        if (!firstSent.has(asked)) firstSent.set(asked, performance.now());
      },
    };
  });
  const roots = {
    server: system.server.process.pid!,
    worker: system.worker.pid,
    api: system.api.pid,
  };
  const threads = Array.from({ length: conversations }, () => `bench-answers-${randomUUID()}`);
  const loadBefore = os.loadavg()[0]!;
  const countersBefore = await serverCounters();
  const before = await cpuOf(roots);
  const benchBefore = process.cpuUsage();
  const started = performance.now();
  const results: Answer[] = [];
  let done = 0;
  await Promise.all(
    threads.map(async (threadId) => {
      for (let index = 0; index < answers; index++) {
        const result = await streamAnswer(
          system.apiUrl,
          threadId,
          `answer ${threadId} ${index}`,
          firstSent,
        ).catch((): Answer => ({ ok: false }));
        results.push(result);
        progress.count(`${mode}, ${conversations} conversations, answers`, ++done, conversations * answers);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const after = await cpuOf(roots);
  const bench = process.cpuUsage(benchBefore);
  const total = conversations * answers;
  const operations = countersPer(countersBefore, await serverCounters(), total);
  const cpu: Record<string, number> = Object.fromEntries(
    Object.keys(roots).map((name) => [name, ((after[name]! - before[name]!) * 1000) / total]),
  );
  cpu['bench (clients + model server)'] = (bench.user + bench.system) / 1000 / total;
  // Read after the CPU window: the reads cost the server too.
  const histories = await Promise.all(threads.map((threadId) => historyCounts(system.client, threadId)));
  const sum = (key: keyof HistoryCounts) => histories.reduce((acc, counts) => acc + counts[key], 0) / total;
  const ttft = results.flatMap((result) => (result.ttftMs === undefined ? [] : [result.ttftMs]));
  const added = results.flatMap((result) => (result.addedMs === undefined ? [] : [result.addedMs]));
  const ok = results.filter((result) => result.ok).length;
  return {
    mode,
    conversations,
    answers: total,
    failed: total - ok,
    seconds,
    turns_per_s: ok / seconds,
    ttft_ms: { p50: percentile(ttft, 0.5), p95: percentile(ttft, 0.95) },
    added_first_token_ms: { p50: percentile(added, 0.5), p95: percentile(added, 0.95) },
    cpu_ms_per_answer: cpu,
    server_busy_ms_per_answer: cpu.server! - (idleServerCpuPerS * seconds * 1000) / total,
    per_answer: {
      events: sum('events'),
      bytes: sum('bytes'),
      signals: sum('signals'),
      upserts: sum('upserts'),
    },
    server_operations_per_answer: operations,
    load_before: loadBefore,
  };
}

const ms = (value: number) => (Number.isNaN(value) ? '—' : value.toFixed(0));

export async function longAnswers(
  system: System,
  fake: FakeAnthropic,
  options: LongAnswersOptions,
): Promise<ScenarioResult> {
  const trials: LongAnswersTrial[] = [];
  try {
    for (const mode of modes) {
      if (mode === 'history') await useChannel(system, 'history');
      // Unmeasured: a fresh worker's first answers pay for its caches and connections.
      await trial(system, fake, 'instant', 3, 1, options, 0);
      const idle = await idleServerCpu(system);
      progress.note(`${mode}: the server idles at ${(idle * 1000).toFixed(0)} ms of CPU per second`);
      for (const conversations of options.concurrency) {
        const result = await trial(
          system,
          fake,
          mode,
          conversations,
          options.answers(conversations),
          options,
          idle,
        );
        trials.push(result);
        if (Object.keys(result.server_operations_per_answer).length > 0)
          progress.note(
            `server operations per answer: ${JSON.stringify(result.server_operations_per_answer)}`,
          );
        progress.note(
          `${mode} × ${conversations}: ${result.turns_per_s.toFixed(2)} answers/s, ${result.per_answer.events.toFixed(0)} events, ` +
            `server ${ms(result.cpu_ms_per_answer.server!)} ms per answer, first token p50 ${ms(result.ttft_ms.p50)} ms`,
        );
      }
    }
  } finally {
    // The scenarios after this one measure the live channel.
    await useChannel(system, 'live');
  }
  const rows: Row[] = [];
  for (const conversations of options.concurrency) {
    const at = trials.filter((result) => result.conversations === conversations);
    const instant = at.find((result) => result.mode === 'instant')!;
    for (const result of at) {
      const ratio = result.server_busy_ms_per_answer / instant.server_busy_ms_per_answer;
      rows.push({
        scenario: rows.length === 0 ? '13 long answers' : '',
        metric: `${conversations} × ${result.answers / conversations} ${result.mode}: events / KiB / signals / SA writes per answer`,
        value: `${result.per_answer.events.toFixed(0)} / ${(result.per_answer.bytes / 1024).toFixed(1)} / ${result.per_answer.signals.toFixed(0)} / ${result.per_answer.upserts.toFixed(1)}`,
        note: `load ${result.load_before.toFixed(1)} before${result.failed > 0 ? `; ${result.failed} answers failed` : ''}`,
      });
      rows.push({
        scenario: '',
        metric: `  CPU ms per answer: server (less idle) / worker / API / bench`,
        value: [
          `${ms(result.cpu_ms_per_answer.server!)} (${ms(result.server_busy_ms_per_answer)})`,
          ...['worker', 'api', 'bench (clients + model server)'].map((name) =>
            ms(result.cpu_ms_per_answer[name]!),
          ),
        ].join(' / '),
        note:
          result.mode === 'instant'
            ? ''
            : `server less idle ${ratio.toFixed(2)}× the instant answer's (target ≤ 1.5× for live)`,
      });
      rows.push({
        scenario: '',
        metric: `  answers/s; first token p50 / p95 ms (added over the model p50)`,
        value: `${result.turns_per_s.toFixed(2)}; ${ms(result.ttft_ms.p50)} / ${ms(result.ttft_ms.p95)} (${ms(result.added_first_token_ms.p50)})`,
      });
    }
  }
  return { rows, data: { trials, ...options } };
}
