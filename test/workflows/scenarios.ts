/**
 * Conversation scenarios against the real dev server, shared by the cached suite and the suite
 * that replays every workflow task from history (`maxCachedWorkflows: 0`).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { sandboxWorkspace } from '../../activities/tools/sandbox';
import { requestCancelUpdate, deferRunUpdate, closeSignal, getBranchesQuery } from '../../common/messages';
import type { Message } from '../../common/transcript';
import { eventually } from '../helpers/temporal';
import { workerHarness } from '../helpers/worker-harness';
import { lastAnswer, TestConversation, toolResults } from '../helpers/conversation';

export function describeConversationScenarios(
  label: string,
  options: { maxCachedWorkflows?: number } = {},
): void {
  describe(label, () => {
    const setup = workerHarness(undefined, options);

    it("answers with a command's real output: a tool_use turn, a bash activity in the workspace, a turn that reads the result", async () => {
      const conversation = await TestConversation.start(setup.client, setup.config);
      const run = await conversation.ask(
        'run: echo "hello from $KEEL_THREAD_ID" > greeting.txt && cat greeting.txt && pwd',
      );
      expect(run).toMatchObject({ status: 'completed', steps: 2 });
      const transcript = await conversation.transcript();
      expect(transcript.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
      expect(transcript[1]!.content.some((block) => block.type === 'tool_use' && block.name === 'bash')).toBe(
        true,
      );
      const workspace = path.join(setup.config.dataDir, 'workspaces', conversation.threadId);
      expect(toolResults(transcript)[0]).toMatchObject({
        content: `hello from ${conversation.threadId}\n${sandboxWorkspace}\n`,
      });
      expect(lastAnswer(transcript)).toContain(`hello from ${conversation.threadId}`);
      expect(await readFile(path.join(workspace, 'greeting.txt'), 'utf8')).toBe(
        `hello from ${conversation.threadId}\n`,
      );
      expect(run.output).toContain(`hello from ${conversation.threadId}`);
    });

    it('runs three tools at once when the model asks for three', async () => {
      const conversation = await TestConversation.start(setup.client, setup.config);
      const run = await conversation.ask(
        'run: sleep 0.5; echo one\nrun: sleep 0.5; echo two\nread: missing.txt',
      );
      expect(run.status).toBe('completed');
      const { events } = await conversation.handle.fetchHistory();
      const scheduled = events!.filter(
        (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'runTool',
      );
      expect(scheduled).toHaveLength(3);
      // All three were scheduled together, before any of them completed.
      const toolIds = new Set(scheduled.map((event) => String(event.eventId)));
      const firstToolDone = events!.findIndex((event) =>
        toolIds.has(String(event.activityTaskCompletedEventAttributes?.scheduledEventId)),
      );
      expect(firstToolDone).toBeGreaterThan(-1);
      expect(scheduled.every((event) => events!.indexOf(event) < firstToolDone)).toBe(true);
      const results = toolResults(await conversation.transcript());
      expect(results.map((result) => [result.content.trim(), result.is_error ?? false])).toEqual([
        ['one', false],
        ['two', false],
        ['missing.txt does not exist', true],
      ]);
    });

    it('gives the model a failing tool as an error result and finishes the run', async () => {
      const conversation = await TestConversation.start(setup.client, setup.config);
      const run = await conversation.ask('run: echo partial; exit 3');
      expect(run.status).toBe('completed');
      expect(toolResults(await conversation.transcript())[0]).toMatchObject({
        is_error: true,
        content: 'Command exited with code 3.\npartial\n',
      });
    });

    it('refuses a path outside the workspace in-band, without failing the run', async () => {
      const conversation = await TestConversation.start(setup.client, setup.config);
      const run = await conversation.ask('read: ../../../../etc/passwd');
      expect(run.status).toBe('completed');
      const [result] = toolResults(await conversation.transcript());
      expect(result).toMatchObject({ is_error: true });
      expect(result!.content).toContain(
        '"../../../../etc/passwd" goes up with ".."; tools only reach files inside the conversation\'s workspace',
      );
    });

    it('queues runs that arrive while busy and answers them in order', async () => {
      const conversation = await TestConversation.start(setup.client, setup.config);
      const first = await conversation.submit('think: 1\nfirst');
      const second = await conversation.submit('second');
      const third = await conversation.submit('third');
      expect([second.status, third.status]).toEqual(['queued', 'queued']);
      expect((await conversation.thread()).queued_run_ids).toEqual([second.run_id, third.run_id]);
      for (const run of [first, second, third])
        expect((await conversation.finished(run.run_id)).status).toBe('completed');
      const inputs = (await conversation.transcript())
        .filter((message) => message.role === 'user')
        .map((message) => message.run_id);
      expect(inputs).toEqual([first.run_id, second.run_id, third.run_id]);
    });

    it('rejects a run under the reject strategy while busy', async () => {
      const conversation = await TestConversation.start(setup.client, setup.config);
      const busy = await conversation.submit('think: 1');
      const error = await conversation
        .submit('not now', { multitask_strategy: 'reject' })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
      expect((error as WorkflowUpdateFailedError).cause).toMatchObject({ type: 'ThreadBusy' });
      await conversation.finished(busy.run_id);
      expect((await conversation.thread()).summary.runs).toBe(1);
    });

    it('interrupts a run mid-tool: the command is killed, the transcript stays valid, the new run answers', async () => {
      const conversation = await TestConversation.start(setup.client, setup.config);
      const marker = path.join(setup.config.dataDir, 'workspaces', conversation.threadId, 'finished.txt');
      const slow = await conversation.submit('run: sleep 5; touch finished.txt');
      await eventually(
        async () =>
          (await conversation.thread()).status === 'busy' &&
          (await conversation.handle.describe()).raw.pendingActivities?.some(
            (activity) => activity.activityType?.name === 'runTool',
          )
            ? true
            : undefined,
        10_000,
        'the tool to start',
      );
      const next = await conversation.ask('never mind', { multitask_strategy: 'interrupt' });
      expect(next.status).toBe('completed');
      expect(await conversation.run(slow.run_id)).toMatchObject({
        status: 'cancelled',
        status_reason: 'superseded',
      });
      const [result] = toolResults(await conversation.transcript());
      expect(result).toMatchObject({ is_error: true });
      expect(result!.content).toContain('may have partly run');
      await sleep(6_000);
      expect(existsSync(marker)).toBe(false);
    });

    it('cancels a run during a model call and the thread stays usable', async () => {
      const conversation = await TestConversation.start(setup.client, setup.config);
      const run = await conversation.submit('think: 30');
      await eventually(
        async () => ((await conversation.handle.describe()).raw.pendingActivities?.length ? true : undefined),
        10_000,
        'the model call',
      );
      // The update answers at once; a streamed model call then stops and hands back what it had
      // said, and the run ends cancelled (decision 0370).
      await conversation.handle.executeUpdate(requestCancelUpdate, {
        args: [{ run_id: run.run_id, reason: 'too slow' }],
      });
      const cancelled = await eventually(
        async () => {
          const current = await conversation.run(run.run_id);
          return current.status === 'cancelled' ? current : undefined;
        },
        10_000,
        'the run to end cancelled',
      );
      expect(cancelled).toMatchObject({ status: 'cancelled', error: { message: 'too slow' } });
      // Idempotent: a second cancel returns the same run.
      expect(
        await conversation.handle.executeUpdate(requestCancelUpdate, { args: [{ run_id: run.run_id }] }),
      ).toMatchObject({ status: 'cancelled' });
      await eventually(
        async () => ((await conversation.handle.describe()).raw.pendingActivities?.length ? undefined : true),
        10_000,
        'the model call to stop',
      );
      expect((await conversation.ask('hello again')).status).toBe('completed');
    });

    it('ends a run failed with a readable error when the model cannot be used, and the next run works', async () => {
      const conversation = await TestConversation.start(setup.client, setup.config);
      const failed = await conversation.ask('hello', { model: 'anthropic:claude-sonnet-4-5' });
      expect(failed).toMatchObject({
        status: 'failed',
        status_reason: 'model_error',
        error: { type: 'ModelNotConfigured' },
      });
      expect(failed.error!.message).toContain('ANTHROPIC_API_KEY');
      const transcript = await conversation.transcript();
      expect(lastAnswer(transcript)).toContain('The run failed: ');
      expect((await conversation.thread()).status).toBe('error');
      expect((await conversation.ask('run: echo recovered')).status).toBe('completed');
      expect((await conversation.thread()).status).toBe('idle');
    });

    it('keeps working on a deferred run and completes it', async () => {
      const conversation = await TestConversation.start(setup.client, setup.config);
      const run = await conversation.submit('think: 1\nrun: echo late');
      expect(
        await conversation.handle.executeUpdate(deferRunUpdate, { args: [{ run_id: run.run_id }] }),
      ).toMatchObject({ status: 'deferred' });
      expect(await conversation.finished(run.run_id)).toMatchObject({ status: 'completed' });
    });

    it('stops a run at its step limit', async () => {
      const conversation = await TestConversation.start(setup.client, setup.config, { max_steps: 1 });
      expect(await conversation.ask('run: echo once')).toMatchObject({
        status: 'failed',
        status_reason: 'max_steps',
      });
    });

    it('carries the whole conversation across continue-as-new', async () => {
      const conversation = await TestConversation.start(setup.client, setup.config);
      const { runId: firstRunId } = await conversation.handle.describe();
      for (let turn = 0; turn < 8; turn++)
        expect((await conversation.ask(`run: echo turn-${turn}`)).status).toBe('completed');
      expect((await conversation.handle.describe()).runId).not.toBe(firstRunId);
      const transcript = await conversation.transcript();
      expect(transcript).toHaveLength(32);
      expect(toolResults(transcript).map((result) => result.content.trim())).toEqual(
        [...Array(8).keys()].map((turn) => `turn-${turn}`),
      );
      expect((await conversation.thread()).summary).toMatchObject({ runs: 8, steps: 16 });
    });

    it('forks from an earlier step, keeping the branch it left across continue-as-new', async () => {
      const conversation = await TestConversation.start(setup.client, setup.config);
      const { runId: firstRunId } = await conversation.handle.describe();
      await conversation.ask('run: echo one');
      const forkPoint = (await conversation.transcript()).at(-1)!.id;
      await conversation.ask('run: echo two');
      const forked = await conversation.ask('run: echo edited', { checkpoint_id: forkPoint });
      expect(forked).toMatchObject({ status: 'completed', checkpoint_id: forkPoint });
      const results = (messages: Message[]) => toolResults(messages).map((result) => result.content.trim());
      expect(results(await conversation.transcript())).toEqual(['one', 'edited']);
      for (let turn = 0; turn < 12 && (await conversation.handle.describe()).runId === firstRunId; turn++)
        await conversation.ask(`run: echo turn-${turn}`);
      expect((await conversation.handle.describe()).runId).not.toBe(firstRunId);
      const { branches } = await conversation.handle.query(getBranchesQuery);
      expect(branches.map((branch) => [branch.parent, results(branch.messages)])).toEqual([
        [forkPoint, ['two']],
      ]);
      expect(results(await conversation.transcript()).slice(0, 2)).toEqual(['one', 'edited']);
    });

    it('shows every query a transcript that obeys the tool rule, while parallel tools run', async () => {
      const conversation = await TestConversation.start(setup.client, setup.config);
      // Long enough for several queries even when every one replays the history on a loaded machine.
      const run = await conversation.submit('run: sleep 1; echo a\nrun: sleep 2.5; echo b\nrun: echo c');
      let observed = 0;
      while (!['completed', 'failed'].includes((await conversation.run(run.run_id)).status)) {
        await conversation.transcript();
        observed++;
      }
      expect(observed).toBeGreaterThan(3);
    });

    it('completes the workflow when the thread is closed, cancelling what was running', async () => {
      const conversation = await TestConversation.start(setup.client, setup.config);
      const run = await conversation.submit('think: 30');
      await conversation.handle.signal(closeSignal, { reason: 'done for today' });
      expect(await conversation.handle.result()).toMatchObject({ thread_id: conversation.threadId });
      expect(await conversation.run(run.run_id)).toMatchObject({
        status: 'cancelled',
        status_reason: 'thread_closed',
      });
    });
  });
}
