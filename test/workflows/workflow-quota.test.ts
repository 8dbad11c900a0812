/**
 * Quotas at the workflow doors (issue 37, decision 0480): a cron's fire and an agent another
 * workflow starts are admitted by a quota's ledger as the API's runs are. A fire the owner's
 * quota refuses is recorded on its thread as a failed run that says why, and counted; an agent
 * its caller's quota refuses is never started, and its caller hears why and when to retry. What
 * is admitted carries its claim and settles it as its run ends. (The Nexus door's refusal is in
 * test/examples/order-triage-nexus.test.ts.)
 */
import { randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { AgentInput, AgentResult } from '../../common/agents';
import type { CronRunInput } from '../../common/crons';
import {
  admitRunUpdate,
  callerQuotaWorkflowId,
  getQuotaQuery,
  quotaWorkflowId,
  settleRunSignal,
} from '../../common/quota';
import { workflowIdFor } from '../../common/thread';
import { WorkerMetrics } from '../../telemetry/worker-metrics';
import { TestConversation } from '../helpers/conversation';
import { eventually } from '../helpers/temporal';
import { workerHarness } from '../helpers/worker-harness';

jest.setTimeout(90_000);

const limits = { concurrent_runs: 1 };
const metrics = new WorkerMetrics();
const setup = workerHarness(() => ({ KEEL_QUOTA_CONCURRENT_RUNS: String(limits.concurrent_runs) }), {
  dependencies: { telemetry: { metrics, captureContent: false } },
});

/** Another run of the ledger's owner under way: it holds the owner's one slot until released. */
async function holdSlot(ledger: string): Promise<() => Promise<void>> {
  const key = `elsewhere/${randomUUID()}`;
  const admission = await setup.client.workflow.executeUpdateWithStart(admitRunUpdate, {
    args: [{ key, limits }],
    startWorkflowOperation: new WithStartWorkflowOperation('quotaWorkflow', {
      workflowId: ledger,
      taskQueue: setup.config.taskQueue,
      args: [{}],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
  expect(admission.admitted).toBe(true);
  return () => setup.client.workflow.getHandle(ledger).signal(settleRunSignal, { key, billed_usd: 0 });
}

/** The ledger's runs under way, once they are `expected` (settling follows a run's end). */
function activeRuns(ledger: string, expected: number): Promise<number> {
  return eventually(async () => {
    const view = await setup.client.workflow.getHandle(ledger).query(getQuotaQuery, limits);
    return view.runs.active === expected ? expected : undefined;
  });
}

async function refusals(reason: string): Promise<number> {
  const counted = await metrics.refusals.get();
  return counted.values.find((value) => value.labels.reason === reason)?.value ?? 0;
}

describe('quotas at the workflow doors (real Temporal, real worker)', () => {
  it("records a cron's fire that its owner's quota refuses as a failed run on the thread, counts it, and admits the next fire once a slot is free", async () => {
    const thread = await TestConversation.start(setup.client, setup.config);
    const ledger = quotaWorkflowId(undefined);
    const fire = (): Promise<{ run_id: string }> => {
      const cron: CronRunInput = {
        cron_id: 'nightly',
        thread_id: thread.threadId,
        thread_workflow_id: workflowIdFor(thread.threadId),
        input: {
          assistant_id: 'agent',
          content: [{ type: 'text', text: 'the nightly report, please' }],
          multitask_strategy: 'enqueue',
          metadata: {},
        },
      };
      return setup.client.workflow.execute('cronRunWorkflow', {
        workflowId: `cron-nightly-workflow-${randomUUID()}`,
        taskQueue: setup.config.taskQueue,
        args: [cron],
      });
    };
    const before = await refusals('concurrency');

    const release = await holdSlot(ledger);
    const refused = await thread.finished((await fire()).run_id);
    expect(refused).toMatchObject({
      status: 'failed',
      status_reason: 'quota_exceeded',
      error: { type: 'QuotaExceeded' },
      refused_input: 'the nightly report, please',
    });
    expect(refused.error?.message).toMatch(/^cron fire refused: 1 runs are under way/);
    expect(refused.steps).toBe(0);
    expect(await refusals('concurrency')).toBe(before + 1);

    await release();
    await activeRuns(ledger, 0);
    const admitted = await thread.finished((await fire()).run_id);
    expect(admitted.status).toBe('completed');
    expect(admitted.quota).toEqual({});
    // The run settled with the ledger as it ended: its slot is free again.
    await activeRuns(ledger, 0);
    expect(await refusals('concurrency')).toBe(before + 1);
  });

  it("refuses an agent its caller's quota has no room for before its workflow starts, with ConcurrencyLimit and when to retry, and settles an admitted one with the caller's ledger", async () => {
    const input: AgentInput = { task: 'say hello', config: { model: 'scripted:demo' } };
    const before = await refusals('concurrency');
    // agentWorkflow starts its agent with startAgent: the caller is that workflow.
    const caller = `caller-${randomUUID()}`;
    const release = await holdSlot(callerQuotaWorkflowId(caller));
    const handle = await setup.client.workflow.start('agentWorkflow', {
      workflowId: caller,
      taskQueue: setup.config.taskQueue,
      args: [input],
    });
    const failure = await handle.result().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    const cause = (failure as WorkflowFailedError).cause;
    expect(cause).toBeInstanceOf(ApplicationFailure);
    expect((cause as ApplicationFailure).type).toBe('ConcurrencyLimit');
    expect((cause as ApplicationFailure).details?.[0]).toEqual({ reason: 'concurrency', retry_after_s: 2 });
    expect(await refusals('concurrency')).toBe(before + 1);
    const history = await handle.fetchHistory();
    expect(history.events?.some((event) => event.startChildWorkflowExecutionInitiatedEventAttributes)).toBe(
      false,
    );
    await release();

    // Another caller, with room: the agent's task carries its claim and settles with that ledger.
    const roomy = `caller-${randomUUID()}`;
    const result = await setup.client.workflow.execute('agentWorkflow', {
      workflowId: roomy,
      taskQueue: setup.config.taskQueue,
      args: [input],
    });
    expect((result as AgentResult).status).toBe('completed');
    const task = await TestConversation.attach(setup.client, (result as AgentResult).thread_id).run('task');
    expect(task.quota).toEqual({ ledger: callerQuotaWorkflowId(roomy) });
    await activeRuns(callerQuotaWorkflowId(roomy), 0);
  });
});
