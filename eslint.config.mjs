// The determinism boundary lives here: workflows/ and common/ may not reach Node, I/O or SDKs,
// and workflows/core/ (the pure reducer) may not reach Temporal either.
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';

const nodeBuiltins = builtinModules.flatMap((name) => [name, `node:${name}`]);

/** Paths that must never be imported from deterministic code (type-only imports are allowed). */
const forbiddenInDeterministicCode = [
  ...nodeBuiltins.map((name) => ({ name, message: 'Node built-ins are not deterministic.' })),
  { name: 'express', message: 'HTTP belongs in api/.' },
  { name: '@anthropic-ai/sdk', message: 'Model SDKs belong in activities/.', allowTypeImports: true },
  { name: 'openai', message: 'Model SDKs belong in activities/.', allowTypeImports: true },
  {
    name: '@temporalio/client',
    message: 'Use @temporalio/workflow inside workflows.',
    allowTypeImports: true,
  },
  { name: '@temporalio/worker', message: 'Worker code belongs in worker/.', allowTypeImports: true },
  { name: '@temporalio/activity', message: 'Activity code belongs in activities/.', allowTypeImports: true },
];

const forbiddenFolders = (folders) => ({
  group: folders.flatMap((folder) => [`../${folder}`, `../${folder}/*`, `../../${folder}/*`]),
  message: 'Deterministic code may not import I/O layers.',
  allowTypeImports: true,
});

/** What deterministic code (workflows/, common/) may not import: every Node-side folder. */
const ioLayers = forbiddenFolders([
  'activities',
  'api',
  'worker',
  'cli',
  'launch',
  'telemetry',
  'platform',
  'store',
]);

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      '.keel/**',
      'bench/results/**',
      'test/replay/histories/**',
      'cli/bin.cjs',
      'dist/**',
      'launch/watchdog.cjs',
      'web/dist/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: {
          allowDefaultProject: [
            'eslint.config.mjs',
            'jest.config.js',
            'test/setup/sequencer.js',
            '.dependency-cruiser.cjs',
          ],
        },
      },
    },
    plugins: { 'import-x': importX },
    rules: {
      eqeqeq: ['error', 'always'],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/only-throw-error': 'off',
      // External modules cannot close a circle through ours; walking into them also made import-x
      // load lru-cache's own `dist/*/node/` folder as its "node" resolver.
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'no-restricted-syntax': [
        'error',
        { selector: 'TSEnumDeclaration', message: 'Use a const object plus a union type.' },
      ],
    },
    settings: {
      'import-x/resolver': { node: { extensions: ['.ts', '.js'] } },
    },
  },
  {
    files: ['workflows/**/*.ts', 'common/**/*.ts', 'examples/*/workflows.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: forbiddenInDeterministicCode,
          patterns: [ioLayers],
        },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'process', message: 'No process.env or process state in deterministic code.' },
        { name: 'setTimeout', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'setInterval', message: 'Use sleep() from @temporalio/workflow.' },
        { name: 'Buffer', message: 'Buffer is a Node API.' },
        { name: 'require', message: 'No dynamic requires in deterministic code.' },
      ],
    },
  },
  {
    // The pure core: the reducer and its helpers know nothing of Temporal, not even its types, and
    // nothing of the interpreter that runs them.
    files: ['workflows/core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: forbiddenInDeterministicCode,
          patterns: [
            ioLayers,
            {
              group: ['@temporalio/*'],
              message: 'The core is pure: Temporal belongs in workflows/interpreter/.',
            },
            {
              group: ['../interpreter', '../interpreter/*'],
              message: 'The core does not know its interpreter.',
            },
          ],
        },
      ],
      // States are unions: a field that may be absent is absent in the type, not asserted away.
      '@typescript-eslint/no-non-null-assertion': 'error',
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    files: ['eslint.config.mjs', 'jest.config.js', 'test/setup/sequencer.js', '.dependency-cruiser.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['jest.config.js', '.dependency-cruiser.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable' } },
  },
  {
    files: ['test/setup/sequencer.js'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
