/**
 * A sub-agent's report that comes after the run that spawned it ended still counts what the
 * sub-agent spent (issue 37, patch `keel-late-child-report-counted`): before, the thread dropped
 * it, and that spend never reached the thread's ledger. A Stop of the parent's run makes such a
 * report: the child's run is cancelled and it reports (patch `keel-stop-reaches-children`).
 */
import { childOriginOf } from '../../common/children';
import * as messages from '../../common/messages';
import { threadIdOf } from '../../common/thread';
import { TestConversation } from '../helpers/conversation';
import { eventually } from '../helpers/temporal';
import { workerHarness } from '../helpers/worker-harness';

jest.setTimeout(60_000);

const setup = workerHarness();

describe('a late sub-agent report (real Temporal, real worker)', () => {
  it("counts a sub-agent's spend on its parent thread when its report comes after the parent's run was stopped", async () => {
    const parent = await TestConversation.start(setup.client, setup.config);
    const run = await parent.submit('spawn: run: sleep 30');
    const childWorkflowId = await eventually(async () => {
      for await (const found of setup.client.workflow.list({
        query: `ParentWorkflowId = '${parent.handle.workflowId}'`,
      }))
        return found.workflowId;
      return undefined;
    });
    const child = TestConversation.attach(setup.client, threadIdOf(childWorkflowId)!);
    const origin = childOriginOf((await child.thread()).metadata)!;
    expect(origin.parent_run_id).toBe(run.run_id);

    // What the parent had spent itself: its run asked for the sub-agent and makes no more calls.
    const before = (await parent.thread()).usage;
    await parent.handle.signal(messages.cancelRunSignal, { run_id: run.run_id, reason: 'stopped' });
    const stopped = await parent.finished(run.run_id);
    expect(stopped.status).toBe('cancelled');

    // The Stop reaches the child (patch `keel-stop-reaches-children`): its run is cancelled, and it
    // reports what it spent after the parent's run ended.
    const childRun = await child.finished('task');
    expect(childRun.status).toBe('cancelled');
    expect(childRun.usage.output_tokens).toBeGreaterThan(0);
    const after = await eventually(async () => {
      const usage = (await parent.thread()).usage;
      return usage.output_tokens > before.output_tokens ? usage : undefined;
    });
    expect(after.output_tokens).toBe(before.output_tokens + childRun.usage.output_tokens);
    expect(after.cost_usd).toBeCloseTo(before.cost_usd + childRun.usage.cost_usd, 9);
    const ended = await parent.run(run.run_id);
    expect(ended.status).toBe('cancelled');
    expect(ended.usage.output_tokens).toBeGreaterThanOrEqual(childRun.usage.output_tokens);
    // No run is made of it: the user stopped that work.
    expect((await parent.thread()).status).toBe('idle');
  });
});
