/**
 * `npm run bench`: what durability costs, measured side by side in one run. Starts its own dev
 * server, worker and API, runs each scenario, prints a table and writes
 * `bench/results/<timestamp>.json`. Never part of `npm test`.
 *
 *   npm run bench                     every scenario, default sizes
 *   npm run bench -- --only step,memory --quick
 *   npm run bench -- --only answers --answers-at 1,20,100,200 --answers-each 3
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Command, Option } from 'commander';
import { type FakeAnthropic, startFakeAnthropic } from '../test/fakes/anthropic-server';
import { type System, startSystem } from './harness';
import { progress } from './progress';
import { type Row, type ScenarioResult, table } from './report';
import { clusterThroughput } from './scenarios/cluster';
import { codecCost } from './scenarios/codec';
import { intake } from './scenarios/intake';
import { longConversation } from './scenarios/long-conversation';
import { memory } from './scenarios/memory';
import { peer } from './scenarios/peer';
import { recovery } from './scenarios/recovery';
import { sandboxCost } from './scenarios/sandbox';
import { stepOverhead } from './scenarios/step-overhead';
import { throughput } from './scenarios/throughput';
import { tracingCost } from './scenarios/tracing';
import { tokenLatency } from './scenarios/token-latency';
import { longAnswers } from './scenarios/long-answers';
import { budgetCeiling } from './scenarios/budget-ceiling';

interface Sizes {
  quick: boolean;
  /** Turns of the long conversation (`--long-turns`), instead of 1,000 (200 with --quick). */
  longTurns?: number;
  /** The fake Anthropic server the worker's `anthropic:` models talk to. */
  fake: FakeAnthropic;
  /** Concurrent conversations of the long-answers scenario (`--answers-at`), instead of 1, 20, 100. */
  answersAt?: number[];
  /** Answers per conversation there (`--answers-each`), instead of 3 alone and 1 at once. */
  answersEach?: number;
}

interface Scenario {
  name: string;
  title: string;
  run(system: System, sizes: Sizes): Promise<ScenarioResult>;
}

const scenarios: Scenario[] = [
  {
    name: 'step',
    title: '1. per-step overhead: Keel vs in-process vs raw Temporal',
    run: (system, { quick }) => stepOverhead(system, { trials: quick ? 3 : 5, pairs: quick ? 6 : 12 }),
  },
  {
    name: 'tokens',
    title: '2. token to client: fake Anthropic server → SSE client, vs reading it directly',
    run: (system, { quick, fake }) =>
      tokenLatency(system, fake, { trials: quick ? 2 : 5, tokens: 200, tokenDelayMs: 20 }),
  },
  {
    name: 'throughput',
    title: '3. throughput: concurrent conversations × 5 tool turns',
    run: (system, { quick }) =>
      throughput(system, {
        concurrency: quick ? [10, 100] : [10, 100, 500],
        turns: 5,
        trials: (concurrency) => (quick || concurrency >= 500 ? 1 : 3),
      }),
  },
  {
    name: 'recovery',
    title: '4. recovery: SIGKILL the worker mid-model-call',
    run: (system, { quick, fake }) => recovery(system, fake, { trials: quick ? 1 : 3 }),
  },
  {
    name: 'memory',
    title: '5. memory: worker RSS per idle cached conversation',
    run: (system, { quick }) =>
      memory(system, { conversations: quick ? 200 : 1_000, trials: quick ? 1 : 2, parallel: 20 }),
  },
  {
    name: 'long',
    title: '6. long conversation: turns in one thread',
    run: (system, { quick, longTurns }) =>
      longConversation(system, { turns: longTurns ?? (quick ? 200 : 1_000), window: 20 }),
  },
  {
    name: 'intake',
    title: '7. intake: POST runs on the normal path, during kills, with no worker',
    run: (system, { quick }) => intake(system, { messages: quick ? 20 : 100, killSeconds: quick ? 20 : 60 }),
  },
  {
    name: 'sandbox',
    title: '8. sandbox: a bash call in bubblewrap vs unconfined',
    run: (_system, { quick }) => sandboxCost({ calls: quick ? 20 : 100, trials: quick ? 1 : 3 }),
  },
  {
    name: 'codec',
    title: '9. codec: encryption at rest per step (real histories, decrypted and encrypted again)',
    run: (system, { quick }) =>
      codecCost(system, { threads: quick ? 2 : 5, turns: quick ? 5 : 10, trials: quick ? 4 : 20 }),
  },
  {
    name: 'tracing',
    title: '10. tracing: a tool turn per step, OTLP export to a Collector on vs off',
    run: (system, { quick }) => tracingCost(system, { turns: quick ? 5 : 20, trials: quick ? 1 : 3 }),
  },
  {
    name: 'cluster',
    title:
      '11. cluster: the throughput workload on the dev server vs PostgreSQL + 4 services with 1–3 worker hosts',
    run: (system, { quick }) =>
      clusterThroughput(system, {
        conversations: quick ? 10 : 40,
        turns: 5,
        workerHosts: [1, 2, 3],
        trials: quick ? 1 : 2,
      }),
  },
  {
    name: 'peer',
    title: "12. the peer: LangGraph's Agent Server (langgraph dev) and Keel, same client, same workload",
    run: (_system, { quick, fake }) =>
      peer(fake, {
        sequentialTurns: quick ? 10 : 30,
        threads: 20,
        turnsPerThread: quick ? 2 : 5,
        plainTurns: quick ? 5 : 10,
      }),
  },
  {
    name: 'answers',
    title: '13. long answers: a realistic model server, the live channel vs KEEL_TOKEN_CHANNEL=history',
    run: (system, { quick, fake, answersAt, answersEach }) =>
      longAnswers(system, fake, {
        concurrency: answersAt ?? (quick ? [1, 20] : [1, 20, 100]),
        answers: (conversations) => answersEach ?? (conversations === 1 && !quick ? 3 : 1),
        tokenDelayMs: 20,
        firstTokenDelayMs: 600,
        tokens: { min: 400, max: 800 },
      }),
  },
  {
    name: 'budget',
    title: '14. budget ceilings: what the model server billed against a thread’s limit',
    run: (system, { fake }) => budgetCeiling(system, fake),
  },
];

async function main(): Promise<void> {
  const program = new Command()
    .name('npm run bench --')
    .addOption(
      new Option(
        '--only <names>',
        `scenarios to run, comma-separated: ${scenarios.map((s) => s.name).join(', ')}`,
      ),
    )
    .option('--quick', 'fewer trials and smaller sizes (a smoke run, not for the record)', false)
    .option('--long-turns <n>', 'turns of the long conversation (default 1000, 200 with --quick)', (value) =>
      Number.parseInt(value, 10),
    )
    .option(
      '--answers-at <list>',
      'concurrent conversations of the long answers (default 1,20,100)',
      (value) => value.split(',').map((n) => Number.parseInt(n, 10)),
    )
    .option('--answers-each <n>', 'answers per conversation there (default 3 alone, 1 at once)', (value) =>
      Number.parseInt(value, 10),
    )
    .parse(process.argv);
  const options = program.opts<{
    only?: string;
    quick: boolean;
    longTurns?: number;
    answersAt?: number[];
    answersEach?: number;
  }>();
  const chosen = options.only?.split(',').map((name) => name.trim());
  const unknown = chosen?.filter((name) => !scenarios.some((scenario) => scenario.name === name)) ?? [];
  if (unknown.length > 0) program.error(`unknown scenario ${unknown.join(', ')}`);
  const selected = scenarios.filter((scenario) => chosen === undefined || chosen.includes(scenario.name));

  const started = new Date();
  progress.phase('starting Temporal, a worker and the API');
  const fake = await startFakeAnthropic({
    responder: () => ({ kind: 'message', content: [{ type: 'text', text: 'ok' }] }),
  });
  const system = await startSystem({
    env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.url },
  });
  progress.done();
  const rows: Row[] = [];
  const results: Record<string, unknown> = {};
  const machine = await system.machine();
  const file = path.join(__dirname, 'results', `${started.toISOString().replace(/[:.]/g, '-')}.json`);
  await mkdir(path.dirname(file), { recursive: true });
  // Written after every scenario, so a late failure keeps what was measured before it.
  const save = () =>
    writeFile(
      file,
      `${JSON.stringify({ started_at: started.toISOString(), quick: options.quick, machine, results }, null, 2)}\n`,
    );
  let failed = false;
  try {
    for (const scenario of selected) {
      progress.phase(scenario.title);
      try {
        const result = await scenario.run(system, {
          quick: options.quick,
          fake,
          ...(options.longTurns === undefined ? {} : { longTurns: options.longTurns }),
          ...(options.answersAt === undefined ? {} : { answersAt: options.answersAt }),
          ...(options.answersEach === undefined ? {} : { answersEach: options.answersEach }),
        });
        rows.push(...result.rows);
        results[scenario.name] = result.data;
        progress.done();
      } catch (error) {
        failed = true;
        const message = error instanceof Error ? error.message : String(error);
        rows.push({
          scenario: scenario.title.split(':')[0]!,
          metric: 'FAILED',
          value: '—',
          note: message.slice(0, 120),
        });
        results[scenario.name] = { error: message };
        progress.note(`FAILED: ${error instanceof Error ? (error.stack ?? message) : message}`);
      }
      await save();
    }
    process.stdout.write(`\n${table(rows)}\n\n`);
    process.stdout.write(
      `machine: ${machine.cores} cores (${machine.cpu_model}), ${(machine.memory_bytes / 2 ** 30).toFixed(0)} GiB, ` +
        `node ${machine.node}, ${machine.temporal_cli}, SDK ${machine.temporal_sdk}, keel ${machine.keel_commit}\n`,
    );
    process.stdout.write(`results: ${path.relative(process.cwd(), file)}\n`);
    if (failed) process.exitCode = 1;
  } finally {
    progress.phase('stopping');
    await system.stop();
    await fake.close();
  }
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
