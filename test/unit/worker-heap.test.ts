import { Worker } from 'node:worker_threads';
import { maxSemiSpaceMb, tuneWorkflowHeaps } from '../../worker/heap';

/** A thread that churns short-lived objects, as a workflow activation does, and reports its young generation. */
const churn = `
const v8 = require('node:v8');
const { parentPort } = require('node:worker_threads');
let kept = [];
for (let index = 0; index < 3e6; index++) {
  kept.push({ index, text: 'event ' + index });
  if (kept.length > 2e5) kept = [];
}
parentPort.postMessage(v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size);
`;

function youngGenerationOfNewThread(): Promise<number> {
  return new Promise((resolve, reject) => {
    const thread = new Worker(churn, { eval: true });
    thread.once('message', (bytes: number) => {
      resolve(bytes);
      void thread.terminate();
    });
    thread.once('error', reject);
  });
}

describe('the workflow threads’ heaps', () => {
  it('let a busy thread started after tuning grow its young generation past V8’s default', async () => {
    // V8's default semi-space is 16 MiB: a young generation of two of them, 32 MiB at most.
    tuneWorkflowHeaps();
    const bytes = await youngGenerationOfNewThread();
    expect(bytes).toBeGreaterThan(32 * 2 ** 20);
    expect(bytes).toBeLessThanOrEqual(2 * maxSemiSpaceMb * 2 ** 20);
  });
});
