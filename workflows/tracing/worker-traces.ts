/**
 * Whether the worker running this workflow exports spans. A worker that does prefixes the workflow
 * bundle's code with an assignment of this global (`worker/workflow-bundle.ts`); the SDK evaluates
 * that once per workflow thread, before any workflow, and gives every workflow the same frozen
 * globals. Only a run since `tracingPerWorkerPatch` reads it, and nothing it decides moves a
 * command or a draw of the workflow's randomness (decision 0290).
 */

/** The global's name. */
export const workerTracesGlobal = '__keelWorkerTraces';

export function workerTraces(): boolean {
  return (globalThis as Record<string, unknown>)[workerTracesGlobal] === true;
}
