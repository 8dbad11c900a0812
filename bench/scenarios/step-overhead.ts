/**
 * 1. Per-step overhead. A turn that uses a tool (model → bash → model) minus a plain turn
 * (model) is exactly one model step plus one tool step; half of it is the cost of a step. The
 * same difference is taken for Keel through its API, for Keel's reducer and activities in this
 * process with no Temporal (a), and for a minimal workflow running 3 against 1 no-op activities
 * on the same server (b). Keel and the floor are compared on the server's own clock (history
 * timestamps); the client's view, which adds how long each takes to hear of the end, is shown
 * beside it. The overhead of a step is what remains outside its activities (each activity's
 * STARTED → COMPLETED taken out, on both sides): Keel's tool step runs a real `bash` in the
 * sandbox and calls a model, the floor's activities do nothing.
 */
import { randomUUID } from 'node:crypto';
import { parseConfig } from '../../platform/config';
import { workflowIdFor } from '../../common/thread';
import { type System, spawnNode } from '../harness';
import { turnSpans, workflowSpan } from '../history-spans';
import { InProcessConversation } from '../in-process';
import { progress } from '../progress';
import type { ScenarioResult } from '../report';
import { showSpread, spread } from '../stats';
import { expectCompleted, turn } from '../turns';

export interface StepOverheadOptions {
  trials: number;
  /** Turn pairs per trial. */
  pairs: number;
}

const plainTurn = 'hello';
const toolTurn = 'run: true';

/** A trial's figure: half the difference of the medians (tool turn − plain turn). */
function perStep(tool: number[], plain: number[]): number {
  return (spread(tool).median - spread(plain).median) / 2;
}

interface FloorFigures {
  step: number[];
  one: number[];
  three: number[];
  /** The same, from the server's history timestamps. */
  serverStep: number[];
  /** The same, without the time inside the activities. */
  outsideStep: number[];
}

/** A span's time outside its activities: what Temporal and the workflow add around the work. */
const outside = (span: { ms: number; activityMs: number }) => span.ms - span.activityMs;

/** Splits two series into `trials` consecutive chunks and takes a per-step figure of each. */
function chunkedPerStep(tool: number[], plain: number[], trials: number): number[] {
  const size = (values: number[]) => Math.max(1, Math.floor(values.length / trials));
  return Array.from({ length: trials }, (_, trial) =>
    perStep(
      tool.slice(trial * size(tool), (trial + 1) * size(tool)),
      plain.slice(trial * size(plain), (trial + 1) * size(plain)),
    ),
  ).filter((value) => Number.isFinite(value));
}

async function measureFloor(
  system: System,
  tuning: 'sdk' | 'keel',
  options: StepOverheadOptions,
  total: number,
): Promise<FloorFigures> {
  const floorQueue = `floor-${tuning}-${randomUUID()}`;
  const worker = await spawnNode(
    'floor worker',
    'bench/floor/worker.ts',
    [system.server.address, floorQueue, tuning],
    {},
    /floor worker ready/,
  );
  const floor: FloorFigures = { step: [], one: [], three: [], serverStep: [], outsideStep: [] };
  const ids = { one: [] as string[], three: [] as string[] };
  try {
    const execute = async (activities: number) => {
      const started = performance.now();
      const workflowId = `floor-${randomUUID()}`;
      await system.floorClient.workflow.execute('floorWorkflow', {
        taskQueue: floorQueue,
        workflowId,
        args: [activities],
      });
      (activities === 1 ? ids.one : ids.three).push(workflowId);
      return performance.now() - started;
    };
    await execute(1);
    for (let trial = 0; trial < options.trials; trial++) {
      const one: number[] = [];
      const three: number[] = [];
      for (let pair = 0; pair < options.pairs; pair++) {
        one.push(await execute(1));
        three.push(await execute(3));
        progress.count(
          `floor workflow pairs (${tuning} worker options)`,
          trial * options.pairs + pair + 1,
          total,
        );
      }
      floor.step.push(perStep(three, one));
      floor.one.push(...one);
      floor.three.push(...three);
    }
  } finally {
    await worker.stop();
  }
  const spans = async (workflowIds: string[]) =>
    Promise.all(workflowIds.map((workflowId) => workflowSpan(system.floorClient, workflowId)));
  const [three, one] = [await spans(ids.three), await spans(ids.one.slice(1))];
  floor.serverStep = chunkedPerStep(
    three.map((span) => span.ms),
    one.map((span) => span.ms),
    options.trials,
  );
  floor.outsideStep = chunkedPerStep(three.map(outside), one.map(outside), options.trials);
  return floor;
}

export async function stepOverhead(system: System, options: StepOverheadOptions): Promise<ScenarioResult> {
  const total = options.trials * options.pairs;
  // Keel, through the API, on a few threads at a time (their workflows stay cached).
  const keel = { step: [] as number[], plain: [] as number[], tool: [] as number[] };
  const threads = Array.from({ length: 4 }, () => `bench-step-${randomUUID()}`);
  for (const thread of threads) expectCompleted(await turn(system.apiUrl, thread, plainTurn), 'warm-up');
  for (let trial = 0; trial < options.trials; trial++) {
    const plain: number[] = [];
    const tool: number[] = [];
    for (let pair = 0; pair < options.pairs; pair++) {
      const thread = threads[pair % threads.length]!;
      const a = await turn(system.apiUrl, thread, plainTurn);
      const b = await turn(system.apiUrl, thread, toolTurn);
      expectCompleted(a, 'plain turn');
      expectCompleted(b, 'tool turn');
      plain.push(a.ms);
      tool.push(b.ms);
      progress.count('Keel turn pairs', trial * options.pairs + pair + 1, total);
    }
    keel.step.push(perStep(tool, plain));
    keel.plain.push(...plain);
    keel.tool.push(...tool);
  }

  // The same turns, timed by the server: from the workflow task that took the update to the one
  // that ended the run, without the time the API takes to hear of it.
  const serverTurns = { plain: [] as number[], tool: [] as number[] };
  const outsideTurns = { plain: [] as number[], tool: [] as number[] };
  // And what each turn wrote to the history, counted from the real histories.
  const turnEvents = { plain: [] as number[], tool: [] as number[] };
  for (const thread of threads) {
    for (const span of (await turnSpans(system.client, workflowIdFor(thread))).slice(1)) {
      (span.text === toolTurn ? serverTurns.tool : serverTurns.plain).push(span.ms);
      (span.text === toolTurn ? outsideTurns.tool : outsideTurns.plain).push(outside(span));
      (span.text === toolTurn ? turnEvents.tool : turnEvents.plain).push(span.events);
    }
  }
  const keelServerStep = chunkedPerStep(serverTurns.tool, serverTurns.plain, options.trials);
  const keelOutsideStep = chunkedPerStep(outsideTurns.tool, outsideTurns.plain, options.trials);

  // (a) No durability: the same reducer and activities in this process.
  const config = parseConfig(
    { PATH: process.env.PATH, HOME: process.env.HOME, KEEL_DATA_DIR: `${system.dir}/inproc` },
    process.cwd(),
  );
  const local = { step: [] as number[], plain: [] as number[], tool: [] as number[] };
  const conversation = new InProcessConversation(config);
  await conversation.turn(plainTurn);
  for (let trial = 0; trial < options.trials; trial++) {
    const plain: number[] = [];
    const tool: number[] = [];
    for (let pair = 0; pair < options.pairs; pair++) {
      let started = performance.now();
      const a = await conversation.turn(plainTurn);
      plain.push(performance.now() - started);
      started = performance.now();
      const b = await conversation.turn(toolTurn);
      tool.push(performance.now() - started);
      if (a !== 'completed' || b !== 'completed') throw new Error(`in-process turn ended ${a}/${b}`);
    }
    local.step.push(perStep(tool, plain));
    local.plain.push(...plain);
    local.tool.push(...tool);
  }
  progress.note('in-process baseline done');

  // (b) The raw Temporal floor: a minimal workflow and no-op activities, in a worker process,
  // once with the SDK's default worker options and once with Keel's tuning; the lower counts.
  const floors = {
    sdk: await measureFloor(system, 'sdk', options, total),
    keel: await measureFloor(system, 'keel', options, total),
  };
  const floor =
    spread(floors.sdk.serverStep).median <= spread(floors.keel.serverStep).median ? floors.sdk : floors.keel;
  const floorName = floor === floors.sdk ? 'SDK defaults' : "Keel's worker tuning";

  const keelStep = spread(keelServerStep);
  const floorStep = spread(floor.serverStep);
  const keelOutside = spread(keelOutsideStep);
  const floorOutside = spread(floor.outsideStep);
  const keelClientStep = spread(keel.step);
  const floorClientStep = spread(floor.step);
  const localStep = spread(local.step);
  const ratio = (a: number, b: number) => `${(a / b).toFixed(1)}×`;
  return {
    rows: [
      {
        scenario: '1 per-step overhead',
        metric: 'Keel, ms per step (server time)',
        value: showSpread(keelStep),
        note: '(tool turn − plain turn) / 2, from history timestamps',
      },
      {
        scenario: '',
        metric: '(b) raw Temporal floor, ms per step (server time)',
        value: showSpread(floorStep),
        note: `minimal workflow, (3 − 1 no-op activities) / 2, ${floorName} (the lower)`,
      },
      {
        scenario: '',
        metric: '  floor with SDK defaults / with Keel tuning',
        value: `${showSpread(spread(floors.sdk.serverStep))} / ${showSpread(spread(floors.keel.serverStep))}`,
      },
      {
        scenario: '',
        metric: '  outside the activities: Keel / floor, ms per step',
        value: `${showSpread(keelOutside)} / ${showSpread(floorOutside)}`,
        note: 'the same, less each activity’s STARTED → COMPLETED: the overhead around the work',
      },
      {
        scenario: '',
        metric: '  as the client sees it: Keel / floor, ms per step',
        value: `${showSpread(keelClientStep)} / ${showSpread(floorClientStep)}`,
        note: 'HTTP runs/wait vs client.workflow.execute (includes hearing of the end)',
      },
      {
        scenario: '',
        metric: '(a) in-process, ms per step',
        value: showSpread(localStep, 2),
        note: 'same reducer + activities, no Temporal',
      },
      {
        scenario: '',
        metric: 'Keel / floor (b): whole step / outside the activities',
        value: `${ratio(keelStep.median, floorStep.median)} / ${ratio(keelOutside.median, floorOutside.median)}`,
        note: 'target ≤ 1.5× (the step’s overhead); the whole step includes running `bash` in the sandbox',
      },
      { scenario: '', metric: 'Keel / in-process (a)', value: ratio(keelStep.median, localStep.median) },
      {
        scenario: '',
        metric: 'Keel plain turn (1 model step), ms',
        value: showSpread(spread(keel.plain)),
        note: 'POST runs/wait end to end',
      },
      {
        scenario: '',
        metric: 'Keel tool turn (model, bash, model), ms',
        value: showSpread(spread(keel.tool)),
      },
      {
        scenario: '',
        metric: 'history events per plain / tool turn',
        value: `${showSpread(spread(turnEvents.plain), 0)} / ${showSpread(spread(turnEvents.tool), 0)}`,
        note: 'from the threads’ real histories; target ≤ 8 / ≤ 15',
      },
      {
        scenario: '',
        metric: 'floor: workflow + 1 no-op activity, ms',
        value: showSpread(spread(floor.one)),
        note: 'client.workflow.execute end to end',
      },
    ],
    data: {
      keel: {
        per_step_ms: keelStep,
        outside_activities_per_step_ms: keelOutside,
        client_per_step_ms: keelClientStep,
        server_plain_turn_ms: spread(serverTurns.plain),
        server_tool_turn_ms: spread(serverTurns.tool),
        plain_turn_ms: spread(keel.plain),
        tool_turn_ms: spread(keel.tool),
        plain_turn_events: spread(turnEvents.plain),
        tool_turn_events: spread(turnEvents.tool),
      },
      in_process: {
        per_step_ms: localStep,
        plain_turn_ms: spread(local.plain),
        tool_turn_ms: spread(local.tool),
      },
      floor: {
        worker_options: floorName,
        per_step_ms: floorStep,
        outside_activities_per_step_ms: floorOutside,
        client_per_step_ms: floorClientStep,
        one_activity_ms: spread(floor.one),
        three_activities_ms: spread(floor.three),
        sdk_defaults_per_step_ms: spread(floors.sdk.serverStep),
        keel_tuning_per_step_ms: spread(floors.keel.serverStep),
      },
      ratios: {
        keel_over_floor: keelStep.median / floorStep.median,
        keel_over_floor_outside_activities: keelOutside.median / floorOutside.median,
        keel_over_in_process: keelStep.median / localStep.median,
      },
      trials: options.trials,
      pairs_per_trial: options.pairs,
    },
  };
}
