/**
 * Human approvals and budgets on the real dev server: approvals decided through the update,
 * timers that expire, a worker restart while an approval waits, and budgets enforced against
 * the fake Messages API (which counts every request that reaches it).
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import type { PendingApproval } from '../../common/approvals';
import * as messages from '../../common/messages';
import { type FakeAnthropic, startFakeAnthropic } from '../fakes/anthropic-server';
import { lastAnswer, TestConversation, toolResults } from '../helpers/conversation';
import { eventsUntilRunEnds } from '../helpers/events';
import { eventually, startTestWorker, testConfig, type RunningWorker } from '../helpers/temporal';
import { workerHarness } from '../helpers/worker-harness';

const pending = (conversation: TestConversation, count: number) =>
  eventually(
    async () => {
      const approvals = await conversation.handle.query(messages.getPendingApprovalsQuery);
      return approvals.length === count ? approvals : undefined;
    },
    20_000,
    `${count} pending approvals`,
  );

/**
 * The pending approval once history holds the workflow task that asked for it, checked against
 * that task: asked at its start (the workflow's clock), due `timeoutS` later. A query can answer
 * before then, from an attempt of that task which never completes and runs again once it times
 * out, 10 s later (seen with every task replayed: a query arriving mid-task leaves the task
 * buffered and dropped); what that attempt showed carries a clock history never held.
 */
async function committedApproval(conversation: TestConversation, timeoutS: number): Promise<PendingApproval> {
  const askedAt = await eventually(
    async () => {
      const events = (await conversation.handle.fetchHistory()).events ?? [];
      const byId = (id: unknown) => events.find((event) => String(event.eventId) === String(id));
      const timer = events.find(
        (event) => optionalTsToMs(event.timerStartedEventAttributes?.startToFireTimeout) === timeoutS * 1000,
      );
      const completed = byId(timer?.timerStartedEventAttributes?.workflowTaskCompletedEventId);
      return optionalTsToMs(byId(completed?.workflowTaskCompletedEventAttributes?.startedEventId)?.eventTime);
    },
    30_000,
    'the approval timer in history',
  );
  const [approval] = await pending(conversation, 1);
  expect({ requested_at: approval!.requested_at, expires_at: approval!.expires_at }).toEqual({
    requested_at: new Date(askedAt).toISOString(),
    expires_at: new Date(askedAt + timeoutS * 1000).toISOString(),
  });
  return approval!;
}

const decide = (
  conversation: TestConversation,
  approval: PendingApproval,
  decision: 'approve' | 'deny',
  reason?: string,
) =>
  conversation.handle.executeUpdate(messages.decideApprovalUpdate, {
    args: [{ approval_id: approval.approval_id, decision, ...(reason === undefined ? {} : { reason }) }],
  });

const describeApprovals = (label: string, options: { maxCachedWorkflows?: number }) =>
  describe(label, () => {
    const setup = workerHarness(undefined, options);
    const requireApproval = { approval: 'require' as const };

    it('pauses a sensitive tool until approved, then runs it and finishes the run', async () => {
      const conversation = await TestConversation.start(setup.client, setup.config, requireApproval);
      const run = await conversation.submit('run: echo approved-output');
      const [approval] = await pending(conversation, 1);
      expect(approval).toMatchObject({
        tool: 'bash',
        input: { command: 'echo approved-output' },
        run_id: run.run_id,
      });
      expect(Date.parse(approval!.expires_at) - Date.parse(approval!.requested_at)).toBe(300_000);
      expect(await conversation.run(run.run_id)).toMatchObject({
        status: 'running',
        status_reason: 'awaiting_approval',
      });
      expect((await conversation.thread()).status).toBe('interrupted');
      const { events } = await conversation.handle.fetchHistory();
      expect(
        events!.some((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'runTool'),
      ).toBe(false);

      await decide(conversation, approval!, 'approve');
      const finished = await conversation.finished(run.run_id);
      expect(finished.status).toBe('completed');
      expect(finished.status_reason).toBeUndefined();
      expect(toolResults(await conversation.transcript())[0]).toMatchObject({ content: 'approved-output\n' });
      const streamed = await eventsUntilRunEnds(setup.client, conversation.threadId, run.run_id);
      expect(streamed.map((event) => event.event)).toEqual(
        expect.arrayContaining(['approval.requested', 'approval.resolved', 'tool.started', 'tool.completed']),
      );
      // A decided approval cannot be decided again.
      await expect(decide(conversation, approval!, 'deny')).rejects.toThrow(WorkflowUpdateFailedError);
    });

    it('denies with a reason that reaches the model, and the file stays', async () => {
      const conversation = await TestConversation.start(setup.client, setup.config, requireApproval);
      // Writing is sensitive too: a human lets it through.
      const written = await conversation.submit('write: keep.txt: precious');
      const [write] = await pending(conversation, 1);
      expect(write!.tool).toBe('write_file');
      await decide(conversation, write!, 'approve');
      expect((await conversation.finished(written.run_id)).status).toBe('completed');
      const run = await conversation.submit('delete: keep.txt');
      const [approval] = await pending(conversation, 1);
      expect(approval!.tool).toBe('delete_file');
      await decide(conversation, approval!, 'deny', 'that file is still needed');
      const finished = await conversation.finished(run.run_id);
      expect(finished.status).toBe('completed');
      const transcript = await conversation.transcript();
      const result = toolResults(transcript).at(-1)!;
      expect(result).toMatchObject({ is_error: true });
      expect(result.content).toContain('that file is still needed');
      // The scripted model quotes the results it was sent: the reason was in the model's request.
      expect(lastAnswer(transcript)).toContain('that file is still needed');
      const read = await conversation.ask('read: keep.txt');
      expect(toolResults(await conversation.transcript()).at(-1)!.content).toBe('precious');
      expect(read.status).toBe('completed');
    });

    it('ends the run with approval_timeout when nobody decides in time, and the thread continues with a new message', async () => {
      const conversation = await TestConversation.start(setup.client, setup.config, {
        ...requireApproval,
        approval_timeout_s: 1,
      });
      const run = await conversation.submit('run: echo never');
      const finished = await conversation.finished(run.run_id);
      expect(finished).toMatchObject({ status: 'failed', status_reason: 'approval_timeout' });
      expect(finished.error?.type).toBe('ApprovalTimeout');
      const transcript = await conversation.transcript();
      expect(toolResults(transcript)[0]).toMatchObject({ is_error: true });
      expect(toolResults(transcript)[0]!.content).toContain('not approved in time');
      expect(await conversation.handle.query(messages.getPendingApprovalsQuery)).toEqual([]);
      const next = await conversation.ask('thanks, that is all');
      expect(next.status).toBe('completed');
    });

    it('holds two approvals at once, refuses unknown ids, and continues only when both are decided', async () => {
      const conversation = await TestConversation.start(setup.client, setup.config, requireApproval);
      const run = await conversation.submit('run: echo first\nrun: echo second\nread: nothing.txt');
      const approvals = await pending(conversation, 2);
      expect(approvals.map((approval) => approval.input)).toEqual([
        { command: 'echo first' },
        { command: 'echo second' },
      ]);
      const unknown = conversation.handle.executeUpdate(messages.decideApprovalUpdate, {
        args: [{ approval_id: 'no-such-approval', decision: 'approve' }],
      });
      // Issue 13: an id that was never an approval is unknown (the API answers 404), not "not pending".
      await expect(unknown).rejects.toMatchObject({ cause: { type: 'ApprovalNotFound' } });
      await decide(conversation, approvals[1]!, 'approve');
      await eventually(async () => ((await conversation.run(run.run_id)).steps === 1 ? true : undefined));
      expect((await pending(conversation, 1))[0]!.approval_id).toBe(approvals[0]!.approval_id);
      await conversation.handle.signal(messages.approvalSignal, {
        approval_id: approvals[0]!.approval_id,
        decision: 'deny',
      });
      const finished = await conversation.finished(run.run_id);
      expect(finished).toMatchObject({ status: 'completed', steps: 2 });
      const results = toolResults(await conversation.transcript());
      expect(results.map((result) => result.is_error === true)).toEqual([true, false, true]);
      expect(results[1]!.content).toBe('second\n');
    });

    it('keeps an approval pending across a worker restart, and the new worker runs the approved tool', async () => {
      const restartConfig = await testConfig();
      let first: RunningWorker | undefined = await startTestWorker({ config: restartConfig, ...options });
      try {
        const conversation = await TestConversation.start(setup.client, restartConfig, requireApproval);
        const run = await conversation.submit('run: echo after-restart');
        const approval = await committedApproval(conversation, 300);
        await first.stop();
        first = undefined;
        const second = await startTestWorker({ config: restartConfig, ...options });
        try {
          // The same approval to the millisecond: its deadline is read from history, never
          // computed again by the worker that replays it.
          const [still] = await pending(conversation, 1);
          expect(still).toEqual(approval);
          await decide(conversation, still!, 'approve');
          const finished = await conversation.finished(run.run_id);
          expect(finished.status).toBe('completed');
          expect(toolResults(await conversation.transcript())[0]).toMatchObject({
            content: 'after-restart\n',
          });
        } finally {
          await second.stop();
        }
      } finally {
        await first?.stop();
      }
    });
  });

describeApprovals('human approvals (real Temporal)', {});
// Every workflow task replayed from history: timers and approvals must be deterministic.
describeApprovals('human approvals, replaying every workflow task', { maxCachedWorkflows: 0 });

describe('budgets (real Temporal, fake Messages API)', () => {
  let fake: FakeAnthropic;
  const model = 'anthropic:claude-sonnet-4-5';

  beforeAll(async () => {
    // Every answer costs 450 tokens, its input counted as 400 before the call: a 1,000-token
    // budget warns after two calls and refuses the third, which would not fit (decision 0425).
    fake = await startFakeAnthropic({
      responder: () => ({
        kind: 'message',
        content: [{ type: 'text', text: 'an answer' }],
        usage: { input_tokens: 400, output_tokens: 50 },
      }),
      countTokens: () => 400,
    });
  });
  const setup = workerHarness(() => ({
    ANTHROPIC_API_KEY: 'test-key',
    ANTHROPIC_BASE_URL: fake.url,
    KEEL_MODEL: model,
  }));
  afterAll(() => fake.close());

  it('warns once at 80 %, makes no model request that would not fit, and continues once the limit is raised', async () => {
    const conversation = await TestConversation.start(setup.client, setup.config, {
      model,
      max_tokens: 1_000,
    });
    const first = await conversation.ask('one');
    expect(first.status).toBe('completed');
    const second = await conversation.ask('two');
    expect(second.status).toBe('completed');
    // 450 + 450 spent; the second call was asked for no more than what was left after its input.
    expect(fake.requests.at(-1)!.body.max_tokens).toBe(1_000 - 450 - 400);
    const requestsBefore = fake.requests.length;

    const stopped = await conversation.ask('three');
    expect(stopped).toMatchObject({ status: 'failed', status_reason: 'budget_exceeded' });
    expect(stopped.error?.message).toContain('needs at least 432 tokens');
    expect(stopped.error?.message).toContain('the thread has 100 tokens left');
    expect(fake.requests.length).toBe(requestsBefore);
    const events = await eventsUntilRunEnds(setup.client, conversation.threadId, stopped.run_id);
    expect(events.filter((event) => event.event === 'budget.warning')).toHaveLength(1);
    expect(events.filter((event) => event.event === 'budget.exceeded')).toHaveLength(1);
    const warning = events.find((event) => event.event === 'budget.warning')!;
    expect(warning.data).toMatchObject({ run_id: expect.any(String), limit: { max_tokens: 1_000 } });

    const thread = await conversation.thread();
    expect(thread.usage.input_tokens + thread.usage.output_tokens).toBe(900);
    expect(thread.usage.cost_usd).toBeGreaterThan(0);
    expect(thread.summary).toMatchObject({ runs: 3, steps: 2, tokens: 900 });
    expect(thread.status).toBe('error');
    expect(stopped.summary).toMatchObject({ runs: 3, tokens: 900 });

    const raised = await conversation.handle.executeUpdate(messages.updateLimitsUpdate, {
      args: [{ max_tokens: 5_000 }],
    });
    expect(raised.config.max_tokens).toBe(5_000);
    const resumed = await conversation.ask('five');
    expect(resumed.status).toBe('completed');
    expect(fake.requests.length).toBe(requestsBefore + 1);
    await expect(
      conversation.handle.executeUpdate(messages.updateLimitsUpdate, { args: [{ max_tokens: -1 }] }),
    ).rejects.toMatchObject({ cause: { type: 'InvalidInput' } });
  });

  it('stops on a cost budget the same way', async () => {
    // The first call reserves 400 input tokens at $3.75/M and an answer at $15/M; it is billed
    // $0.00195, and what is left does not pay for the second's input and a minimal answer.
    const conversation = await TestConversation.start(setup.client, setup.config, {
      model,
      max_cost_usd: 0.0035,
    });
    expect((await conversation.ask('one')).status).toBe('completed');
    const before = fake.requests.length;
    const stopped = await conversation.ask('two');
    expect(stopped).toMatchObject({ status: 'failed', status_reason: 'budget_exceeded' });
    expect(fake.requests.length).toBe(before);
  });
});
