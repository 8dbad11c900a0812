/**
 * How far one event travels through the reducer (issue 33): for each event below, the files of
 * `workflows/` and `common/` whose functions ran while `reduce` handled it, and how many function
 * calls returned in them (V8's precise coverage, call counts reset before the event). Then, read
 * from the sources, the call-backs: calls in the leaf modules (model-step, tool-step, sub-agents,
 * approvals, budget) of functions that end, start or queue a run (run-lifecycle.ts), append to
 * the transcript (transcript.ts' appendMessages), or commit another leaf's step.
 *
 *   npx tsx bench/loop-trace.ts            the table
 *   npx tsx bench/loop-trace.ts --files    and each event's files with their call counts
 */
import { readFileSync } from 'node:fs';
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

/** Call sites in the leaves of what moves a run or appends to the transcript, read from the source. */
function callBacks(): Array<[string, number, string[]]> {
  const leaves = ['model-step', 'tool-step', 'sub-agents', 'approvals', 'budget'];
  const deciders = new Set(['run-lifecycle', 'transcript', ...leaves]);
  return leaves.map((leaf) => {
    const source = readFileSync(`${root}workflows/core/${leaf}.ts`, 'utf8');
    const names: string[] = [];
    for (const match of source.matchAll(/^import \{([^}]*)\} from '\.\/([\w-]+)';/gm)) {
      if (!deciders.has(match[2]!) || match[2] === leaf) continue;
      for (const name of match[1]!.split(',').map((part) => part.trim()))
        if (name !== '' && !name.startsWith('type ')) names.push(`${match[2]}.${name}`);
    }
    // A leaf calling another leaf's pure helper is fine; what counts is what moves the run or the transcript.
    const moving = names.filter((name) =>
      /^(run-lifecycle\.|transcript\.appendMessages$|tool-step\.(recordToolResult|afterStart|startToolStep|interruptToolStep)$|model-step\.(beginModelStep|afterToolStep)$)/.test(
        name,
      ),
    );
    let sites = 0;
    const body = source.replace(/^import [^;]*;$/gm, '');
    for (const name of moving)
      sites += body.match(new RegExp(`\\b${name.split('.')[1]}\\(`, 'g'))?.length ?? 0;
    return [leaf, sites, moving];
  });
}

async function main(): Promise<void> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
  // One warm-up pass so that module loading is not counted.
  for (const [, state, event] of cases) reduce(state, event);
  const rows: string[] = ['| event | files | calls |', '| --- | ---: | ---: |'];
  const details: string[] = [];
  for (const [name, state, event] of cases) {
    const { files } = await trace(session, state, event);
    const calls = [...files.values()].reduce((sum, count) => sum + count, 0);
    rows.push(`| ${name} | ${files.size} | ${calls} |`);
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
