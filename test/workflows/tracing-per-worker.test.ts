/**
 * A workflow is traced on a worker that exports spans and not on one that does not (decision 0290),
 * and a run moves between the two kinds without a difference in what it does: its spans await
 * nothing and draw their ids from a stream of their own, never the workflow's `Math.random`. Each
 * worker here caches no workflow, so every workflow task replays the whole history on whichever
 * worker takes it, and the finished histories replay on both kinds of worker.
 */
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type { KeelConfig } from '../../platform/config';
import type { CronRunInput } from '../../common/crons';
import type { cronRunWorkflow } from '../../workflows/cron-run-workflow';
import { TestConversation } from '../helpers/conversation';
import { closeTestClient, startTestWorker, testClient, testConfig } from '../helpers/temporal';
import { inMemoryTracing, replaySchedulingSpans, scheduledSpanIds } from '../helpers/tracing';

jest.setTimeout(240_000);

type History = temporal.api.history.v1.IHistory;

describe('tracing decided by the worker', () => {
  let client: Client;
  let config: KeelConfig;

  beforeAll(async () => {
    client = await testClient();
    config = await testConfig();
  });
  afterAll(async () => {
    await closeTestClient();
  });

  const replayOn = (tracing: boolean, history: History, workflowId: string): Promise<string[]> =>
    replaySchedulingSpans({ tracing, history, workflowId, encryption: config.encryption });

  it('hands a conversation turn by turn between workers that trace and workers that do not, and replays it on either', async () => {
    const tracing = inMemoryTracing();
    const conversation = await TestConversation.start(client, config);
    const turns = [true, false, true, false];
    const headers: (string | undefined)[][] = [];
    for (const [index, traced] of turns.entries()) {
      const worker = await startTestWorker({ config, maxCachedWorkflows: 0, ...(traced ? { tracing } : {}) });
      try {
        const before = (await conversation.handle.fetchHistory()).events!.length;
        expect(await conversation.ask(`run: echo turn ${index}`)).toMatchObject({ status: 'completed' });
        await conversation.transcript();
        headers.push(scheduledSpanIds((await conversation.handle.fetchHistory()).events!.slice(before)));
      } finally {
        await worker.stop();
      }
    }
    // Each turn's tool call was scheduled with a trace header exactly when its worker traced.
    expect(headers.map((turn) => turn.length > 0 && turn.every((id) => id !== undefined))).toEqual(turns);
    expect(headers.map((turn) => turn.some((id) => id !== undefined))).toEqual(turns);
    // The traced workers exported those scheduling spans.
    const live = headers.flat().filter((id): id is string => id !== undefined);
    const exported = new Set(tracing.spans().map((span) => span.spanContext().spanId));
    expect(live.filter((id) => !exported.has(id))).toEqual([]);

    const history = await conversation.handle.fetchHistory();
    // A worker that traces replays every turn with spans, the untraced ones too, and still makes
    // the traced turns' ids: the untraced turns drew nothing from the run's span-id stream.
    const replayed = await replayOn(true, history, conversation.handle.workflowId);
    expect(live.filter((id) => !replayed.includes(id))).toEqual([]);
    expect(await replayOn(false, history, conversation.handle.workflowId)).toEqual([]);
  });

  it("leaves workflow code's randomness alone: a cron's new thread id is the same on either kind of worker", async () => {
    const tracing = inMemoryTracing();
    for (const traced of [true, false]) {
      const worker = await startTestWorker({ config, maxCachedWorkflows: 0, ...(traced ? { tracing } : {}) });
      const workflowId = `cron-run-tracing-${randomUUID()}`;
      try {
        const cron: CronRunInput = {
          cron_id: `cron-${randomUUID()}`,
          input: {
            assistant_id: 'agent',
            content: [{ type: 'text', text: 'hello from a cron' }],
            multitask_strategy: 'enqueue',
            metadata: {},
          },
          new_thread: {
            metadata: {},
            config: { model: 'scripted:demo', approval: 'auto', approval_timeout_s: 300, max_steps: 50 },
          },
        };
        // The new thread's id is a `uuid4()` drawn right after the run's first span (on a tracing
        // worker) was made: it names the child workflow, a command a replay compares.
        const { thread_id } = await client.workflow.execute<typeof cronRunWorkflow>('cronRunWorkflow', {
          workflowId,
          taskQueue: config.taskQueue,
          args: [cron],
        });
        const history = await client.workflow.getHandle(workflowId).fetchHistory();
        const started = history.events!.find(
          (event) => event.startChildWorkflowExecutionInitiatedEventAttributes,
        );
        expect(started?.startChildWorkflowExecutionInitiatedEventAttributes?.workflowId).toContain(thread_id);
        // On the other kind of worker, and on the same kind, the replay starts the same child.
        await replayOn(!traced, history, workflowId);
        await replayOn(traced, history, workflowId);
      } finally {
        await worker.stop();
      }
    }
  });
});
