/**
 * 10. Tracing: what exporting traces costs per step. The same tool turns (scripted model, two
 * model calls and a bash call each) run through the API against a worker with tracing off and a
 * worker exporting every span over OTLP to a real OpenTelemetry Collector, in alternation; the
 * difference of the medians, per model step, is tracing's cost; the worker's CPU time per step
 * (from /proc) says the same less noisily on a loaded machine. The API runs with tracing off in
 * both modes: this is the worker's share (workflow, activity and GenAI spans).
 */
import { startCollector } from '../../test/helpers/otel-collector';
import { processStats, type System } from '../harness';
import { progress } from '../progress';
import type { ScenarioResult } from '../report';
import { showSpread, spread } from '../stats';

export interface TracingOptions {
  /** Timed turns per mode and trial (after one untimed turn on each new worker). */
  turns: number;
  trials: number;
}

/** Model steps in one `run:` turn of the scripted model: ask for the tool, then answer. */
const stepsPerTurn = 2;

async function turnMs(system: System, threadId: string, index: number): Promise<number> {
  const started = process.hrtime.bigint();
  const response = await fetch(`${system.apiUrl}/threads/${threadId}/runs/wait`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ input: { messages: [{ role: 'user', content: `run: echo turn ${index}` }] } }),
  });
  if (response.status !== 200)
    throw new Error(`turn ${index}: HTTP ${response.status} ${await response.text()}`);
  return Number(process.hrtime.bigint() - started) / 1e6;
}

export async function tracingCost(system: System, options: TracingOptions): Promise<ScenarioResult> {
  progress.note('starting an OpenTelemetry Collector (built once into ~/.cache/keel/otelcol)');
  const collector = await startCollector();
  const modes = {
    off: {},
    on: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint },
  } satisfies Record<string, Record<string, string>>;
  const times: Record<keyof typeof modes, number[]> = { off: [], on: [] };
  const cpuMs: Record<keyof typeof modes, number[]> = { off: [], on: [] };
  let done = 0;
  const total = options.trials * 2 * options.turns;
  try {
    for (let trial = 0; trial < options.trials; trial++) {
      for (const mode of ['off', 'on'] as const) {
        await system.worker.stop();
        await system.startWorker(modes[mode]);
        const threadId = `tracing-${mode}-${trial}-${Date.now()}`;
        await fetch(`${system.apiUrl}/threads`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ thread_id: threadId }),
        });
        // Untimed: the new worker's first workflow task (sticky queue hand-over, cold caches).
        await turnMs(system, threadId, -1);
        const before = await processStats(system.worker.pid);
        for (let turn = 0; turn < options.turns; turn++) {
          times[mode].push((await turnMs(system, threadId, turn)) / stepsPerTurn);
          progress.count('tool turns', ++done, total);
        }
        const after = await processStats(system.worker.pid);
        if (before !== undefined && after !== undefined)
          cpuMs[mode].push(((after.cpuS - before.cpuS) * 1000) / (options.turns * stepsPerTurn));
      }
    }
    const spans = (await collector.spans()).length;
    const off = spread(times.off);
    const on = spread(times.on);
    const cpuOff = spread(cpuMs.off);
    const cpuOn = spread(cpuMs.on);
    return {
      rows: [
        {
          scenario: '10 tracing',
          metric: 'tool turn per model step, tracing off, ms',
          value: showSpread(off, 1),
          note: `${times.off.length} turns, ${stepsPerTurn} steps each`,
        },
        {
          scenario: '',
          metric: '  tracing on (OTLP to a Collector), ms per step',
          value: showSpread(on, 1),
          note: `${spans} spans stored`,
        },
        {
          scenario: '',
          metric: '  tracing adds (difference of medians), ms per step',
          value: (on.median - off.median).toFixed(1),
        },
        {
          scenario: '',
          metric: '  worker CPU per step, tracing off → on, ms',
          value: `${cpuOff.median.toFixed(1)} → ${cpuOn.median.toFixed(1)}`,
          note: `median of ${options.trials} batches per mode`,
        },
      ],
      data: {
        off_ms_per_step: off,
        on_ms_per_step: on,
        off_worker_cpu_ms_per_step: cpuOff,
        on_worker_cpu_ms_per_step: cpuOn,
        spans_stored: spans,
        steps_per_turn: stepsPerTurn,
        ...options,
      },
    };
  } finally {
    await system.worker.stop();
    await system.startWorker();
    await collector.stop();
  }
}
