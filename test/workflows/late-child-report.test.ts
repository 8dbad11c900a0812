/**
 * A sub-agent's report that comes after the run that spawned it ended still counts what the
 * sub-agent spent (issue 37, patch `keel-late-child-report-counted`): before, the thread dropped
 * it, and that spend never reached the thread's ledger.
 */
import { childOriginOf } from '../../common/children';
import * as messages from '../../common/messages';
import type { Run } from '../../common/run';
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

    await parent.handle.signal(messages.cancelRunSignal, { run_id: run.run_id, reason: 'stopped' });
    const stopped = await parent.finished(run.run_id);
    expect(stopped.status).toBe('cancelled');
    const before = (await parent.thread()).usage;

    // The child's report as it sends it, in flight as the parent's run was stopped: its run ended
    // having spent this much.
    const spent = {
      input_tokens: 900,
      output_tokens: 70,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cost_usd: 0.0038,
    };
    const childRun = { ...(await child.run('task')), status: 'completed', usage: spent } as Run;
    await parent.handle.signal(messages.childCompletedSignal, {
      ...origin,
      child_thread_id: child.threadId,
      run: childRun,
    });
    const after = await eventually(async () => {
      const usage = (await parent.thread()).usage;
      return usage.output_tokens > before.output_tokens ? usage : undefined;
    });
    expect(after.output_tokens).toBe(before.output_tokens + spent.output_tokens);
    expect(after.cost_usd).toBeCloseTo(before.cost_usd + spent.cost_usd, 9);
    const ended = await parent.run(run.run_id);
    expect(ended.status).toBe('cancelled');
    expect(ended.usage.output_tokens).toBe(stopped.usage.output_tokens + spent.output_tokens);
    // No run is made of it: the user stopped that work.
    expect((await parent.thread()).status).toBe('idle');
  });
});
