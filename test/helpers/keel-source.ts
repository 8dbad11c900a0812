/**
 * The in-repo examples import Keel as another codebase does (`keel/workflow`, …). In this
 * repository those resolve to the sources through the `keel-source` export condition, which
 * tsconfig.json and jest.config.js set; the workflow bundler (webpack) is told here
 * (package.json's exports, decision 0350). A consumer resolves them to the build.
 */
import type { WorkerOptions } from '@temporalio/worker';

export const keelSourceBundlerOptions: NonNullable<WorkerOptions['bundlerOptions']> = {
  webpackConfigHook: (config) => ({
    ...config,
    resolve: { ...config.resolve, conditionNames: ['keel-source', '...'] },
  }),
};
