/**
 * Keel's dependency rules, checked by `npm run check` (dependency-cruiser; decision 0415).
 *
 * Type imports count: `tsPreCompilationDeps` reads the TypeScript before it is compiled, so an
 * `import type` that vanishes from the JavaScript is still an edge (ESLint's `import-x/no-cycle`
 * skips them, which is how four circles went unseen). The floors, lowest first, are those of
 * docs/architecture.md ("Where things live") and of eslint.config.mjs's determinism boundary:
 *
 *   common/                                 the shared vocabulary: imports no other folder
 *   workflows/core/                         the pure reducer: common/ only
 *   workflows/ (the rest)                   the interpreter, agents, small workflows: common/, core
 *   codec/, telemetry/, platform/           Node-side services below every process: common/
 *                                           (platform/: the configuration, the Temporal
 *                                           connection, the package's own files, addresses and
 *                                           host lists, the paged transcript reader)
 *   store/                                  the Store's database and sealing: common/, codec/,
 *                                           platform/
 *   activities/                             the worker's I/O: common/, telemetry/, codec/, store/,
 *                                           platform/
 *   worker/, api/                           the two processes: anything below, never each other;
 *                                           api/ takes only types from workflows/, and nothing
 *                                           from activities/ (the worker's code)
 *     api/gateway/                          the one door to the conversation workflows: no
 *                                           feature folder above it (decision 0525)
 *     api/protocol/                         pure LangGraph translators: no Temporal, no services
 *   launch/                                 the composition root: anything above but cli/
 *   cli/                                    the entry point and the user's client
 *   examples/, test/, bench/                users of all of it; nothing imports them
 *   web/src/                                the browser page: only itself, and the client error
 *                                           module it shares with cli/ (common/api-call-errors.ts)
 *
 * Violations that were there when the check came are listed in
 * .dependency-cruiser-known-violations.json and pass; any new one fails (`--ignore-known`).
 * Mend one, then run `npm run deps:baseline` so it cannot come back.
 */

const productFolders = [
  'common',
  'workflows',
  'codec',
  'store',
  'telemetry',
  'platform',
  'activities',
  'worker',
  'api',
  'launch',
  'cli',
];
const users = ['examples', 'test', 'bench'];
const folders = (names) => `^(${names.join('|')})/`;

/** A rule that `from` imports nothing in `to` (type imports included). */
const notUp = (name, comment, from, to) => ({
  name,
  comment,
  severity: 'error',
  from: { path: from },
  to: { path: to },
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment:
        'An import circle, counting type imports: a module that needs itself through others cannot be read, ' +
        'tested or moved alone. Break it by moving what both sides need one floor down.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    notUp(
      'common-imports-no-other-folder',
      'common/ is the floor every side stands on (and what workflows may import): it imports no other folder.',
      '^common/',
      folders([...productFolders.filter((name) => name !== 'common'), ...users, 'web']),
    ),
    notUp(
      'core-imports-only-common',
      'workflows/core/ is the pure reducer: it knows common/ and itself, not its interpreter, nor any I/O layer.',
      '^workflows/core/',
      `^workflows/(?!core/)|${folders([...productFolders.filter((name) => name !== 'common' && name !== 'workflows'), ...users, 'web'])}`,
    ),
    notUp(
      'core-leaves-return-facts',
      "The agent loop's leaves are pure over their slice and return facts; only the sequencer moves a run (its record through run-lifecycle.ts): a leaf that called either would decide a run's next state out of sight (decision 0530).",
      '^workflows/core/(model-step|tool-step|sub-agents|approvals|approval-gate|budget|spawn|child-usage|stop-conditions)\\.ts$',
      '^workflows/core/(sequencer|run-lifecycle|reducer)\\.ts$',
    ),
    notUp(
      'workflows-import-only-common',
      'Workflow code is deterministic: besides workflows/ it imports only common/ (ESLint bans Node and SDKs; this counts type imports too).',
      '^workflows/',
      folders([
        ...productFolders.filter((name) => name !== 'common' && name !== 'workflows'),
        ...users,
        'web',
      ]),
    ),
    notUp(
      'codec-and-telemetry-import-only-common',
      'codec/, telemetry/ and platform/ serve every process: they stand on common/ alone.',
      '^(codec|telemetry|platform)/',
      folders(['workflows', 'store', 'activities', 'worker', 'api', 'launch', 'cli', ...users, 'web']),
    ),
    notUp(
      'store-imports-only-common-and-codec',
      "store/ is the Store's database and sealing, which the API and the worker's memory tools share: it stands on common/, platform/ (its configuration) and codec/ (Keel's keys).",
      '^store/',
      folders([
        ...productFolders.filter((name) => !['common', 'codec', 'platform', 'store'].includes(name)),
        ...users,
        'web',
      ]),
    ),
    notUp(
      'activities-import-no-process',
      'Activities run inside the worker and take what they need as arguments: no process code, no workflows.',
      '^activities/',
      folders(['workflows', 'worker', 'api', 'launch', 'cli', ...users, 'web']),
    ),
    notUp(
      'worker-imports-no-api-or-launch',
      'The worker process takes its config and connections as arguments: it imports neither the API nor the launcher above it.',
      '^worker/',
      folders(['api', 'launch', 'cli', ...users, 'web']),
    ),
    notUp(
      'api-imports-no-worker-activities-or-launch',
      "The API process takes its config and connections as arguments: not the worker's code (activities/, worker/), not the launcher above it.",
      '^api/',
      folders(['activities', 'worker', 'launch', 'cli', ...users, 'web']),
    ),
    {
      name: 'api-takes-only-types-from-workflows',
      comment:
        'The API reaches workflows through Temporal (updates, signals, queries), so it may name their types but run none of their code.',
      severity: 'error',
      from: { path: '^api/' },
      to: { path: '^workflows/', dependencyTypesNot: ['type-only'] },
    },
    notUp(
      'api-gateway-imports-no-feature',
      'api/gateway/ is the one door to the conversation workflows that the feature folders stand on (decision 0525): it imports none of them, only the thread ref it addresses and the beat request it sends.',
      '^api/gateway/',
      '^api/(?!gateway/|errors\\.ts$|threads/thread-ref\\.ts$|streams/live-beat\\.ts$)',
    ),
    notUp(
      'api-protocol-is-pure-translation',
      "api/protocol/ only translates between Keel's views and LangGraph's (decision 0525): it calls no Temporal and no service, and knows of api/ only its errors.",
      '^api/protocol/',
      '^api/(?!protocol/|errors\\.ts$)|(^|/)node_modules/@temporalio/',
    ),
    notUp(
      'launch-imports-no-cli',
      'launch/ is the composition root the cli calls: it imports nothing above it.',
      '^launch/',
      folders(['cli', ...users, 'web']),
    ),
    notUp(
      'cli-imports-no-users',
      'Nothing Keel ships imports its examples, tests or benchmarks.',
      '^cli/',
      folders([...users, 'web']),
    ),
    {
      name: 'web-imports-only-itself',
      comment:
        'The web chat is a browser bundle of its own: it talks to the API over HTTP, not through its modules. ' +
        "It reads the API's errors as the CLI does, through the client error module and its base (no Node, no DOM).",
      severity: 'error',
      from: { path: '^web/src/' },
      to: { path: folders([...productFolders, ...users]), pathNot: '^common/(errors|api-call-errors)\\.ts$' },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist|web/dist|bench/results|test/replay/histories)/|^cli/bin\\.cjs$' },
    enhancedResolveOptions: {
      // The package's own name (`keel/workflow`, in examples/) resolves to the source, as under tsx.
      exportsFields: ['exports'],
      conditionNames: ['keel-source', 'import', 'require', 'node', 'default'],
      extensions: ['.ts', '.tsx', '.js', '.cjs', '.mjs', '.json'],
    },
  },
};
