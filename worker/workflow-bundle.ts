/**
 * The workflow bundle: what goes into it (built once by `worker/bundle.ts`, or at a worker's start),
 * and the code a worker runs, which says whether that worker exports spans (decision 0290).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { failureConverterPath } from '../codec/data-converter';
import { workerTracesGlobal } from '../workflows/tracing/worker-traces';

/** `.ts` when this worker runs the sources, `.js` when it runs the build: the bundler takes either. */
const extension = path.extname(__filename);

/** The workflow entry point the bundler starts from. */
export const workflowsPath = path.resolve(__dirname, `../workflows/index${extension}`);

/** Keel's workflow interceptors (tracing, idle storages), bundled with every workflow build. */
export const workflowInterceptorModules = [
  path.resolve(__dirname, `../workflows/tracing-interceptors${extension}`),
];

/**
 * Stateless libraries evaluated once per workflow thread, not once per workflow (decision 0280): the
 * SDK evaluates a bundle module again for each workflow and keeps it while the workflow is cached,
 * and zod alone was ~510 KiB of the 875 KiB an idle workflow held.
 */
export const workflowPreloadModules = [path.resolve(__dirname, `../workflows/shared-modules${extension}`)];

export async function buildWorkflowBundle(entry = workflowsPath): Promise<string> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: entry,
    workflowInterceptorModules,
    preloadModules: workflowPreloadModules,
    // Failures raised in workflow code carry their message as a payload, for the codec to encrypt.
    failureConverterPath,
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} },
  });
  return code;
}

/**
 * The bundle's `code` as a worker runs it: a worker that exports spans runs it after a statement
 * that sets `workerTracesGlobal`, which its workflows read (`workflows/tracing/worker-traces.ts`).
 * On the bundle's first line, so its source map still matches every later line.
 */
export function codeForWorker(code: string, tracing: boolean): string {
  return tracing ? `globalThis.${workerTracesGlobal} = true; ${code}` : code;
}

/** The bundle at `bundlePath` (or, without one, a bundle built now) as a worker takes it. */
export async function workflowBundleFor(options: {
  bundlePath?: string;
  tracing: boolean;
}): Promise<{ code: string } | { codePath: string }> {
  if (options.bundlePath !== undefined && !options.tracing) return { codePath: options.bundlePath };
  const code =
    options.bundlePath === undefined
      ? await buildWorkflowBundle()
      : await readFile(options.bundlePath, 'utf8');
  return { code: codeForWorker(code, options.tracing) };
}
