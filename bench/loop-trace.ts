/**
 * How far one event travels through the reducer (issue 33): for each event below, the files of
 * `workflows/` and `common/` whose functions ran while `reduce` handled it, and how many function
 * calls returned in them (V8's precise coverage, call counts reset before the event). Then, read
 * from the sources, the call-backs: calls in the leaf modules (model-step, tool-step, sub-agents,
 * approvals, budget) of functions of other modules that move a run or append to the transcript
 * (see `callBacks`).
 *
 *   npx tsx bench/loop-trace.ts            the table
 *   npx tsx bench/loop-trace.ts --files    and each event's files with their call counts
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CallModelResult } from '../common/activities';
import type { SubmitInput } from '../common/messages';
import { reduce } from '../workflows/core/reducer';
import type { ThreadState } from '../workflows/core/state';
import type { ConversationEvent } from '../workflows/core/transitions';
import { freshThread, t0, usage } from '../test/helpers/reducer';

const root = `${join(__dirname, '..')}/`;

const input = (run_id: string, text: string): SubmitInput => ({
  run_id,
  assistant_id: 'agent',
  content: [{ type: 'text', text }],
  multitask_strategy: 'enqueue',
  metadata: {},
});
const answer = (
  content: CallModelResult['content'],
  stop: CallModelResult['stop_reason'],
): CallModelResult => ({
  content,
  stop_reason: stop,
  usage,
  model: 'scripted-demo',
  tools: {
    bash: { sideEffects: true, sensitive: true },
    spawn_agent: { sideEffects: true, sensitive: false },
  },
});
const bash = { type: 'tool_use' as const, id: 'u1', name: 'bash', input: { command: 'ls' } };
const spawn = { type: 'tool_use' as const, id: 'u2', name: 'spawn_agent', input: { task: 'look' } };

const play = (state: ThreadState, events: ConversationEvent[]): ThreadState =>
  events.reduce((current, event) => reduce(current, event).state, state);

const limited = freshThread({ max_cost_usd: 1 });
const started = play(limited, [{ type: 'inputSubmitted', now: t0 + 1, input: input('r1', 'go') }]);
const askedTool = play(started, [
  { type: 'modelResponded', now: t0 + 2, run_id: 'r1', step: 1, result: answer([bash], 'tool_use') },
]);
const askedChild = play(started, [
  { type: 'modelResponded', now: t0 + 2, run_id: 'r1', step: 1, result: answer([spawn], 'tool_use') },
  { type: 'childStarted', now: t0 + 3, child_thread_id: 't1.u2' },
]);
const awaiting = play(freshThread({ approval: 'require' }), [
  { type: 'inputSubmitted', now: t0 + 1, input: input('r1', 'go') },
  { type: 'modelResponded', now: t0 + 2, run_id: 'r1', step: 1, result: answer([bash], 'tool_use') },
]);

const cases: Array<[string, ThreadState, ConversationEvent]> = [
  [
    'modelResponded (asks for a tool)',
    started,
    { type: 'modelResponded', now: t0 + 2, run_id: 'r1', step: 1, result: answer([bash], 'tool_use') },
  ],
  [
    'toolFinished (the last call: step committed, model asked again)',
    askedTool,
    {
      type: 'toolFinished',
      now: t0 + 3,
      run_id: 'r1',
      tool_use_id: 'u1',
      outcome: { content: 'ok', is_error: false },
    },
  ],
  [
    'modelResponded (ends its turn: run completed)',
    started,
    {
      type: 'modelResponded',
      now: t0 + 2,
      run_id: 'r1',
      step: 1,
      result: answer([{ type: 'text', text: 'done' }], 'end_turn'),
    },
  ],
  [
    'childCompleted (answers the waiting call)',
    askedChild,
    {
      type: 'childCompleted',
      now: t0 + 4,
      report: {
        parent_thread_id: 't1',
        parent_run_id: 'r1',
        tool_use_id: 'u2',
        task: 'look',
        child_thread_id: 't1.u2',
        run: {
          ...started.runs[0]!,
          status: 'completed',
          output: 'seen',
          ended_at: new Date(t0).toISOString(),
        },
      },
    },
  ],
  [
    'approvalDecided (deny: step committed, model asked again)',
    awaiting,
    { type: 'approvalDecided', now: t0 + 3, decision: { approval_id: 'r1.1.1', decision: 'deny' } },
  ],
];

interface Trace {
  files: Map<string, number>;
}

async function trace(session: Session, state: ThreadState, event: ConversationEvent): Promise<Trace> {
  await session.post('Profiler.takePreciseCoverage');
  reduce(state, event);
  const { result } = await session.post('Profiler.takePreciseCoverage');
  const files = new Map<string, number>();
  for (const script of result) {
    if (!script.url.startsWith('file://')) continue;
    const file = relative(root, fileURLToPath(script.url));
    if (!/^(workflows|common)\//.test(file)) continue;
    const calls = script.functions.reduce((sum, fn) => sum + (fn.ranges[0]?.count ?? 0), 0);
    if (calls > 0) files.set(file, calls);
  }
  return { files };
}

/** Top-level functions of a module, by name, with their bodies (read from the source, roughly). */
function functionsOf(source: string): Map<string, string> {
  const functions = new Map<string, string>();
  const starts = [...source.matchAll(/^(?:export )?(?:function (\w+)|const (\w+) =)/gm)];
  starts.forEach((match, index) => {
    const end = starts[index + 1]?.index ?? source.length;
    functions.set(match[1] ?? match[2]!, source.slice(match.index, end));
  });
  return functions;
}

/** What each module imports from its siblings in workflows/core: local name → module. */
function importsOf(source: string): Map<string, string> {
  const imports = new Map<string, string>();
  for (const match of source.matchAll(/^import \{([^}]*)\} from '\.\/([\w-]+)';/gm))
    for (const part of match[1]!.split(','))
      if (part.trim() !== '' && !part.trim().startsWith('type ')) imports.set(part.trim(), match[2]!);
  return imports;
}

/**
 * Call-backs, read from the sources: a function "moves" a run when it appends to the transcript
 * (transcript.ts `appendMessages`), is one of run-lifecycle.ts's moves of a run record (all but
 * `unchanged`) or one of the sequencer's, or calls a function that moves. A call-back is a call
 * in a leaf (model-step, tool-step, sub-agents, approvals, budget) of a function of another
 * module that moves.
 */
function callBacks(): Array<[string, number, string[]]> {
  const core = `${root}workflows/core/`;
  const modules = new Map(
    readdirSync(core)
      .filter((file) => file.endsWith('.ts'))
      .map((file) => {
        const source = readFileSync(core + file, 'utf8');
        return [file.replace(/\.ts$/, ''), { functions: functionsOf(source), imports: importsOf(source) }];
      }),
  );
  const moving = new Set<string>(['transcript.appendMessages']);
  for (const [name, module] of modules)
    if (name === 'run-lifecycle' || name === 'sequencer')
      for (const fn of module.functions.keys()) if (fn !== 'unchanged') moving.add(`${name}.${fn}`);
  const resolve = (module: string, name: string): string =>
    `${modules.get(module)?.imports.get(name) ?? module}.${name}`;
  const calls = (body: string): string[] => [...body.matchAll(/\b(\w+)\(/g)].map((match) => match[1]!);
  for (let grew = true; grew;) {
    grew = false;
    for (const [name, module] of modules)
      for (const [fn, body] of module.functions)
        if (!moving.has(`${name}.${fn}`) && calls(body).some((call) => moving.has(resolve(name, call)))) {
          moving.add(`${name}.${fn}`);
          grew = true;
        }
  }
  return ['model-step', 'tool-step', 'sub-agents', 'approvals', 'budget'].map((leaf) => {
    const module = modules.get(leaf)!;
    const targets = new Set<string>();
    let sites = 0;
    for (const body of module.functions.values())
      for (const call of calls(body)) {
        const target = resolve(leaf, call);
        if (!target.startsWith(`${leaf}.`) && moving.has(target)) {
          sites++;
          targets.add(target);
        }
      }
    return [leaf, sites, [...targets].sort()];
  });
}

async function main(): Promise<void> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  // One warm-up pass so that module loading is not counted.
  for (const [, state, event] of cases) reduce(state, event);
  const rows: string[] = [
    '| event | files | of them in workflows/core | calls |',
    '| --- | ---: | ---: | ---: |',
  ];
  const details: string[] = [];
  for (const [name, state, event] of cases) {
    const { files } = await trace(session, state, event);
    const calls = [...files.values()].reduce((sum, count) => sum + count, 0);
    const core = [...files.keys()].filter((file) => file.startsWith('workflows/core/')).length;
    rows.push(`| ${name} | ${files.size} | ${core} | ${calls} |`);
    details.push(`${name}:`, ...[...files].map(([file, count]) => `  ${file} ${count}`));
  }
  session.disconnect();
  console.log(rows.join('\n'));
  const backs = callBacks();
  console.log('\n| leaf | call-backs | into |\n| --- | ---: | --- |');
  for (const [leaf, sites, names] of backs) console.log(`| ${leaf} | ${sites} | ${names.join(', ')} |`);
  console.log(`\ncall-backs in all: ${backs.reduce((sum, [, sites]) => sum + sites, 0)}`);
  if (process.argv.includes('--files')) console.log(`\n${details.join('\n')}`);
}

void main();
