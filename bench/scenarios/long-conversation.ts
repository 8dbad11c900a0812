/**
 * 6. Long conversations: N turns, one after another, in one thread. Turn latency early (turns
 * 1–20, around turn 10) against late (the last 20), the CPU each process spent per turn in both
 * windows (less at the mercy of a shared machine's load than latency), how many times the
 * workflow continued as new, and the largest history and payload any of its runs held.
 */
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { workflowIdFor } from '../../common/thread';
import type { System } from '../harness';
import { at } from '../history-spans';
import { progress } from '../progress';
import { treeCpuSeconds } from '../sampler';
import type { ScenarioResult } from '../report';
import { showSpread, spread } from '../stats';
import { expectCompleted, outcomeOf, turn, type TurnResult } from '../turns';

/** The bytes of every payload in a history event together (what the server's size check adds up). */
function payloadBytes(value: unknown): number {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return 0;
  const record = value as Record<string, unknown>;
  if (record.data instanceof Uint8Array && 'metadata' in record) return record.data.length;
  let total = 0;
  for (const child of Object.values(record)) total += payloadBytes(child);
  return total;
}

/** The largest single payload in a history event, in bytes (walks the decoded event). */
function largestPayload(value: unknown, seen = 0): number {
  if (value === null || typeof value !== 'object') return seen;
  if (value instanceof Uint8Array) return seen;
  const record = value as Record<string, unknown>;
  let largest = seen;
  if (record.data instanceof Uint8Array && 'metadata' in record)
    largest = Math.max(largest, record.data.length);
  for (const child of Object.values(record)) largest = Math.max(largest, largestPayload(child));
  return largest;
}

/**
 * A turn; when the API answers 503 (a read bounded to 3 s found the thread's worker too busy, as
 * it is on a loaded shared machine), the run goes on regardless: join it, as a client would.
 */
async function turnOrJoin(
  apiUrl: string,
  threadId: string,
  text: string,
): Promise<TurnResult & { joined: boolean }> {
  const first = await turn(apiUrl, threadId, text);
  if (first.status !== 503) return { ...first, joined: false };
  const started = performance.now() - first.ms;
  for (let attempt = 0; attempt < 120; attempt++) {
    const listed = await fetch(`${apiUrl}/threads/${threadId}/runs?limit=1`);
    if (listed.status === 200) {
      const [run] = (await listed.json()) as Array<{ run_id: string }>;
      const joined = await fetch(`${apiUrl}/threads/${threadId}/runs/${run!.run_id}/join`);
      const body = await joined.text();
      if (joined.status !== 503)
        return {
          ms: performance.now() - started,
          status: joined.status,
          outcome: outcomeOf(joined.status, body),
          bytes: body.length,
          joined: true,
        };
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
  return { ...first, joined: false };
}

type Cpu = Record<'server' | 'worker' | 'api', number>;

async function cpuSeconds(system: System): Promise<Cpu> {
  const [server, worker, api] = await Promise.all(
    [system.server.process.pid!, system.worker.pid, system.api.pid].map(treeCpuSeconds),
  );
  return { server: server!, worker: worker!, api: api! };
}

/** CPU ms per turn of each process between two readings `turns` turns apart. */
function perTurn(from: Cpu, to: Cpu, turns: number): Cpu & { total: number } {
  const each = (name: keyof Cpu) => ((to[name] - from[name]) * 1000) / turns;
  const cpu = { server: each('server'), worker: each('worker'), api: each('api') };
  return { ...cpu, total: cpu.server + cpu.worker + cpu.api };
}

export async function longConversation(
  system: System,
  options: { turns: number; window: number },
): Promise<ScenarioResult> {
  const threadId = `bench-long-${randomUUID()}`;
  const latencies: number[] = [];
  const responseBytes: number[] = [];
  const joined: number[] = [];
  const cpu: Partial<Record<'earlyStart' | 'earlyEnd' | 'lateStart' | 'lateEnd', Cpu>> = {};
  /** Readings every `stretch` turns: CPU per turn along the thread, hand-overs included. */
  const stretch = 100;
  const stretches: Cpu[] = [];
  for (let index = 0; index < options.turns; index++) {
    if (index % stretch === 0) stretches.push(await cpuSeconds(system));
    if (index === 0) cpu.earlyStart = await cpuSeconds(system);
    if (index === options.turns - options.window) cpu.lateStart = await cpuSeconds(system);
    const result = await turnOrJoin(system.apiUrl, threadId, `turn ${index + 1}: hello`);
    expectCompleted(result, `turn ${index + 1}`);
    if (index === options.window - 1) cpu.earlyEnd = await cpuSeconds(system);
    if (index === options.turns - 1) cpu.lateEnd = await cpuSeconds(system);
    if (result.joined) joined.push(index + 1);
    latencies.push(result.ms);
    responseBytes.push(result.bytes);
    progress.count('turns', index + 1, options.turns);
  }
  const workflowId = workflowIdFor(threadId);
  const runs: Array<{
    run_id: string;
    events: number;
    bytes: number;
    largest_payload: number;
    largest_payload_event: string;
    largest_event_payloads: number;
    largest_event_payloads_event: string;
  }> = [];
  const eventName = (event: temporal.api.history.v1.IHistoryEvent) =>
    (temporal.api.enums.v1.EventType[event.eventType ?? 0] ?? String(event.eventType)).replace(
      'EVENT_TYPE_',
      '',
    );
  /** Each model activity, timed by the server: scheduled → started (queue), started → completed (run). */
  const modelCalls: Array<{ at: number; queue: number; run: number }> = [];
  for await (const execution of system.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    const history = await system.client.workflow.getHandle(workflowId, execution.runId).fetchHistory();
    const events = history.events ?? [];
    const scheduled = new Map<string, number>();
    const started = new Map<string, number>();
    for (const event of events) {
      const id = String(event.eventId);
      if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
        scheduled.set(id, at(event));
      const start = event.activityTaskStartedEventAttributes;
      if (start && scheduled.has(String(start.scheduledEventId)))
        started.set(String(start.scheduledEventId), at(event));
      const done = event.activityTaskCompletedEventAttributes;
      const begun = done ? started.get(String(done.scheduledEventId)) : undefined;
      if (done && begun !== undefined) {
        const queued = scheduled.get(String(done.scheduledEventId))!;
        modelCalls.push({ at: queued, queue: begun - queued, run: at(event) - begun });
      }
    }
    let largest = { bytes: 0, event: '' };
    let largestEvent = { bytes: 0, event: '' };
    for (const event of events) {
      const bytes = largestPayload(event);
      if (bytes > largest.bytes) largest = { bytes, event: eventName(event) };
      const together = payloadBytes(event);
      if (together > largestEvent.bytes) largestEvent = { bytes: together, event: eventName(event) };
    }
    runs.push({
      run_id: execution.runId,
      events: events.length,
      bytes: temporal.api.history.v1.History.encode(history).finish().length,
      largest_payload: largest.bytes,
      largest_payload_event: largest.event,
      largest_event_payloads: largestEvent.bytes,
      largest_event_payloads_event: largestEvent.event,
    });
  }
  modelCalls.sort((a, b) => a.at - b.at);
  const callsEarly = modelCalls.slice(0, options.window);
  const callsLate = modelCalls.slice(-options.window);
  const medianOf = (calls: typeof modelCalls, part: 'queue' | 'run') =>
    spread(calls.map((call) => call[part])).median;
  const modelCallMs = {
    early: { queue: medianOf(callsEarly, 'queue'), run: medianOf(callsEarly, 'run') },
    late: { queue: medianOf(callsLate, 'queue'), run: medianOf(callsLate, 'run') },
  };
  const early = spread(latencies.slice(0, options.window));
  const late = spread(latencies.slice(-options.window));
  const largestHistory = runs.reduce((a, b) => (b.bytes > a.bytes ? b : a));
  const largestPayloadRun = runs.reduce((a, b) => (b.largest_payload > a.largest_payload ? b : a));
  const largestPayloadBytes = largestPayloadRun.largest_payload;
  const largestEventRun = runs.reduce((a, b) =>
    b.largest_event_payloads > a.largest_event_payloads ? b : a,
  );
  const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
  const earlyCpu = perTurn(cpu.earlyStart!, cpu.earlyEnd!, options.window);
  const lateCpu = perTurn(cpu.lateStart!, cpu.lateEnd!, options.window);
  const allCpu = perTurn(cpu.earlyStart!, cpu.lateEnd!, options.turns);
  stretches.push(cpu.lateEnd!);
  const alongCpuEach = stretches
    .slice(1)
    .map((reading, index) =>
      perTurn(stretches[index]!, reading, Math.min(stretch, options.turns - index * stretch)),
    );
  const alongCpu = alongCpuEach.map((each) => Math.round(each.total));
  const showCpu = ({ server, worker, api, total }: ReturnType<typeof perTurn>) =>
    `${total.toFixed(0)} (server ${server.toFixed(0)}, worker ${worker.toFixed(0)}, API ${api.toFixed(0)})`;
  return {
    rows: [
      {
        scenario: '6 long conversation',
        metric: `turn latency, turns 1–${options.window}, ms`,
        value: showSpread(early),
        note: `${options.turns} plain turns in one thread`,
      },
      {
        scenario: '',
        metric: `turn latency, last ${options.window} turns, ms`,
        value: showSpread(late),
        note: `late / early ${(late.median / early.median).toFixed(2)}× (target: flat)`,
      },
      {
        scenario: '',
        metric: `CPU per turn, turns 1–${options.window}, ms`,
        value: showCpu(earlyCpu),
        note: 'the dev server, the worker and the API, each with its children',
      },
      {
        scenario: '',
        metric: `CPU per turn, last ${options.window} turns, ms`,
        value: showCpu(lateCpu),
        note: `late / early ${(lateCpu.total / earlyCpu.total).toFixed(2)}×`,
      },
      {
        scenario: '',
        metric: 'CPU per turn, all turns, ms',
        value: showCpu(allCpu),
        note: `hand-overs included; per ${stretch} turns: ${alongCpu.join(', ')}`,
      },
      {
        scenario: '',
        metric: 'model activity, first → last 20, median ms',
        value: `runs ${modelCallMs.early.run.toFixed(1)} → ${modelCallMs.late.run.toFixed(1)}, waits ${modelCallMs.early.queue.toFixed(1)} → ${modelCallMs.late.queue.toFixed(1)}`,
        note: "the server's clock: started → completed, and scheduled → started",
      },
      {
        scenario: '',
        metric: 'continue-as-new',
        value: String(runs.length - 1),
        note: `${runs.length} workflow runs`,
      },
      {
        scenario: '',
        metric: 'largest history',
        value: `${largestHistory.events} events, ${kib(largestHistory.bytes)}`,
      },
      {
        scenario: '',
        metric: 'largest payload',
        value: kib(largestPayloadBytes),
        note: `in ${largestPayloadRun.largest_payload_event}; target < 512 KiB (the server's warning)`,
      },
      {
        scenario: '',
        metric: "largest event's payloads together",
        value: kib(largestEventRun.largest_event_payloads),
        note: `in ${largestEventRun.largest_event_payloads_event}: the server checks a command's payloads together`,
      },
      {
        scenario: '',
        metric: 'runs/wait answer size, first → last',
        value: `${kib(responseBytes[0]!)} → ${kib(responseBytes.at(-1)!)}`,
        ...(joined.length === 0 ? {} : { note: `${joined.length} turns answered 503 and were joined` }),
      },
    ],
    data: {
      turns: options.turns,
      latency_ms: latencies,
      early_ms: early,
      late_ms: late,
      cpu_ms_per_turn: { early: earlyCpu, late: lateCpu, all: allCpu, per_stretch: alongCpuEach, stretch },
      model_call_ms: modelCallMs,
      continue_as_new: runs.length - 1,
      runs,
      largest_payload_bytes: largestPayloadBytes,
      response_bytes: { first: responseBytes[0], last: responseBytes.at(-1) },
      joined_after_503: joined,
    },
  };
}
