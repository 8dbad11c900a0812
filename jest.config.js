/** Dependencies of `@langchain/langgraph-sdk` published as ES modules only. */
const esmOnly = ['p-retry', 'p-queue', 'p-timeout', 'is-network-error'];

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  // `keel/*` (the package's own exports, which the examples import) resolve to the sources here,
  // not to the build a consumer gets (package.json, decision 0350).
  testEnvironmentOptions: { customExportConditions: ['keel-source', 'node', 'node-addons'] },
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
    ],
    // ESM-only packages that LangGraph's SDK requires from its CommonJS build.
    [`/node_modules/(${esmOnly.join('|')})/.+\\.js$`]: [
      '@swc/jest',
      { jsc: { target: 'es2022' }, module: { type: 'commonjs' } },
    ],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnly.join('|')})/)`],
  // One Temporal dev server for the whole run (never a mocked Temporal).
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  // Each jest worker on a server of its own (test/setup/temporal-per-worker.ts).
  setupFiles: ['<rootDir>/test/setup/temporal-per-worker.ts'],
  testSequencer: '<rootDir>/test/setup/sequencer.js',
  testTimeout: 60_000,
  maxWorkers: 2,
};
