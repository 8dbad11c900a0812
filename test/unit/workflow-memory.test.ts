import { readFile } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
// The SDK's reusable V8 context, as a workflow thread runs it: the only way to see what one workflow
// evaluates for itself (its activator's module cache).
import { ReusableVMWorkflowCreator } from '@temporalio/worker/lib/workflow/reusable-vm';
import { msToTs } from '@temporalio/common/lib/time';
import { collectHeaps } from '../../worker/heap-probe';
import { codeForWorker } from '../../worker/workflow-bundle';

/**
 * The ids of the modules one workflow evaluated for itself, in the worker's real bundle as a worker
 * that does (`tracing`) or does not export spans runs it: the workflow is created and its first
 * activation starts it, as a new conversation's first workflow task does (its input is missing, so
 * it fails at once, after the interceptors have decided how it is traced).
 */
async function modulesOfOneWorkflow(tracing: boolean): Promise<string[]> {
  const code = codeForWorker(await readFile(process.env.KEEL_TEST_BUNDLE!, 'utf8'), tracing);
  const creator = await ReusableVMWorkflowCreator.create(
    {
      code,
      filename: 'workflow-bundle.js',
      sourceMap: { version: 3, file: 'workflow-bundle.js', sources: [], names: [], mappings: '' },
    },
    10_000,
    new Set(),
    undefined,
  );
  let workflow: Awaited<ReturnType<typeof creator.createWorkflow>> | undefined;
  try {
    const now = Date.now();
    const info = {
      workflowType: 'assistantWorkflow',
      workflowId: 'memory-test',
      runId: 'memory-test-run',
      taskQueue: 'memory-test',
      namespace: 'default',
      unsafe: { isReplaying: false, now: Date.now },
      searchAttributes: {},
      memo: {},
      startTime: new Date(now),
      runStartTime: new Date(now),
    };
    workflow = await creator.createWorkflow({
      info: info as never,
      randomnessSeed: [1, 2],
      now,
      showStackTraceSources: false,
    });
    await workflow.activate({
      runId: info.runId,
      timestamp: msToTs(now),
      isReplaying: false,
      historyLength: 3,
      jobs: [
        {
          initializeWorkflow: { workflowType: info.workflowType, workflowId: info.workflowId, arguments: [] },
        },
      ],
    });
    // The SDK keeps the context protected; the test reads it all the same.
    const { context } = creator as unknown as {
      context: { __TEMPORAL_ACTIVATOR__: { moduleCache: Map<string, unknown> } };
    };
    const activator = context.__TEMPORAL_ACTIVATOR__;
    return [...activator.moduleCache.keys()];
  } finally {
    await workflow?.dispose();
    await creator.destroy();
  }
}

const openTelemetry = (modules: string[]): string[] =>
  modules.filter((id) => /node_modules\/(@opentelemetry|@temporalio\/interceptors-opentelemetry)\//.test(id));

describe('an idle cached workflow', () => {
  it('shares zod and the semantic conventions with the thread’s other workflows', async () => {
    const modules = await modulesOfOneWorkflow(false);
    // Its own copy of Keel's workflow code, which holds per-workflow state.
    expect(modules.some((id) => id.includes('workflows/interpreter/'))).toBe(true);
    // None of the stateless libraries preloaded once per thread (workflows/shared-modules.ts).
    expect(
      modules.filter((id) => /node_modules\/(zod|@opentelemetry\/semantic-conventions)\//.test(id)),
    ).toEqual([]);
  });

  it('evaluates no OpenTelemetry module of its own on a worker that exports no spans', async () => {
    expect(openTelemetry(await modulesOfOneWorkflow(false))).toEqual([]);
  });

  it('has its own tracing on a worker that exports spans', async () => {
    // OpenTelemetry's API holds the tracer provider each traced workflow registers.
    const modules = openTelemetry(await modulesOfOneWorkflow(true));
    expect(modules.some((id) => id.includes('@opentelemetry/api/'))).toBe(true);
    expect(modules.some((id) => id.includes('@opentelemetry/sdk-trace-base/'))).toBe(true);
  });
});

describe('the worker’s heap probe', () => {
  it('collects a worker thread’s garbage and reports what it keeps', async () => {
    // A thread that makes ~80 MB of garbage and keeps ~24 MB, then waits.
    const thread = new Worker(
      `
      const { parentPort } = require('node:worker_threads');
      let garbage = [];
      for (let index = 0; index < 1e6; index++) garbage.push({ index, text: 'garbage ' + index });
      garbage = undefined;
      globalThis.kept = Array.from({ length: 3e5 }, (_, index) => ({ index, text: 'kept ' + index }));
      parentPort.postMessage('ready');
      setInterval(() => {}, 1000);
      `,
      { eval: true, name: 'probe-test' },
    );
    try {
      await new Promise((resolve, reject) => {
        thread.once('message', resolve);
        thread.once('error', reject);
      });
      const report = await collectHeaps();
      expect(report.heaps[0]!.thread).toBe('main');
      const heap = report.heaps.find((entry) => entry.thread.includes('probe-test'));
      expect(heap).toBeDefined();
      expect(heap!.usedBytes).toBeGreaterThan(10 * 2 ** 20);
      expect(heap!.usedBytes).toBeLessThan(60 * 2 ** 20);
    } finally {
      await thread.terminate();
    }
  });
});
