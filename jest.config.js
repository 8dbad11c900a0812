/** ES-module-only dependencies of `@langchain/langgraph-sdk` and `@a2a-js/sdk` (jose), required from their CommonJS builds. */
const esmOnly = ['p-retry', 'p-queue', 'p-timeout', 'is-network-error', 'jose'];

/** @type {import('jest').Config} */
module.exports = {
  // Node, with a Temporal dev server of the file's own (decision 0010).
  testEnvironment: '<rootDir>/test/setup/temporal-environment.ts',
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
  // The Temporal CLI and the workflow bundle, once for the run (never a mocked Temporal).
  globalSetup: '<rootDir>/test/setup/global-setup.ts',
  globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
  testSequencer: '<rootDir>/test/setup/sequencer.js',
  testTimeout: 60_000,
  maxWorkers: 2,
};
