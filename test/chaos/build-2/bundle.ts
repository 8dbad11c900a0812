/**
 * Bundles build 2: Keel's workflow code with `common/summaries` replaced by the build-2
 * variant beside this file, the way a new release of the same code would differ.
 */
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { failureConverterPath } from '../../../codec/data-converter';
import {
  workflowInterceptorModules,
  workflowPreloadModules,
  workflowsPath,
} from '../../../worker/create-worker';

const variant = path.join(__dirname, 'summaries.ts');

export async function buildBuild2Bundle(): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath,
    // As the real build has them (worker/bundle.ts): a release differs by the variant only.
    workflowInterceptorModules,
    preloadModules: workflowPreloadModules,
    failureConverterPath,
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} },
    webpackConfigHook: (config) => ({
      ...config,
      plugins: [
        ...(config.plugins ?? []),
        {
          apply(compiler) {
            compiler.hooks.normalModuleFactory.tap('keel-build-2', (factory) => {
              factory.hooks.beforeResolve.tap('keel-build-2', (data) => {
                // Every import of the summaries but the variant's own, which wraps the real ones.
                if (/[\\/]common[\\/]summaries$/.test(data.request) && data.contextInfo.issuer !== variant)
                  data.request = variant;
              });
            });
          },
        },
      ],
    }),
  });
  if (!code.includes('keel-test-build-2-step')) throw new Error('build 2 did not take the variant');
  return code;
}
