/** Drives one conversation workflow the way the API does: updates in, queries and the stream out. */
import { randomUUID } from 'node:crypto';
import type { Client, WorkflowHandle } from '@temporalio/client';
import { isStall } from '../../api/gateway/intake';
import { waitForRun } from '../../api/runs/run-waiter';
import { unscopedRef } from '../../api/threads/thread-ref';
import type { KeelConfig } from '../../platform/config';
import * as messages from '../../common/messages';
import { isTerminal, type Run } from '../../common/run';
import type { Thread, ThreadConfig } from '../../common/thread';
import { findTranscriptViolation, type Message } from '../../common/transcript';
import type { conversationWorkflow } from '../../workflows/interpreter/workflow';
import { modelMessages } from '../../workflows/core/transcript';
import { workflowIdFor } from '../../common/thread';

export class TestConversation {
  private constructor(
    readonly client: Client,
    readonly threadId: string,
    readonly handle: WorkflowHandle<typeof conversationWorkflow>,
  ) {}

  static async start(
    client: Client,
    config: KeelConfig,
    thread: Partial<ThreadConfig> = {},
  ): Promise<TestConversation> {
    const threadId = `t-${randomUUID()}`;
    const handle = await client.workflow.start<typeof conversationWorkflow>('conversationWorkflow', {
      workflowId: workflowIdFor(threadId),
      taskQueue: config.taskQueue,
      args: [
        {
          thread_id: threadId,
          metadata: {},
          config: {
            model: 'scripted:demo',
            approval: 'auto',
            approval_timeout_s: 300,
            max_steps: 50,
            ...thread,
          },
          created_at: new Date().toISOString(),
        },
      ],
    });
    return new TestConversation(client, threadId, handle);
  }

  /** A conversation someone else started (the API, an update-with-start). */
  static attach(client: Client, threadId: string): TestConversation {
    return new TestConversation(
      client,
      threadId,
      client.workflow.getHandle<typeof conversationWorkflow>(workflowIdFor(threadId)),
    );
  }

  submit(text: string, options: Partial<messages.SubmitInput> = {}): Promise<Run> {
    return this.handle.executeUpdate(messages.submitInputUpdate, {
      args: [
        {
          run_id: randomUUID(),
          assistant_id: 'agent',
          content: [{ type: 'text', text }],
          multitask_strategy: 'enqueue',
          metadata: {},
          ...options,
        },
      ],
    });
  }

  /** Waits for the run to end, as the API waits. */
  async finished(runId: string, timeoutMs = 30_000): Promise<Run> {
    const run = await this.run(runId);
    if (isTerminal(run.status)) return run;
    const done = await waitForRun(this.client, unscopedRef(this.threadId), runId, timeoutMs);
    if (done === undefined)
      throw new Error(
        `run ${runId} did not finish within ${timeoutMs} ms (status ${(await this.run(runId)).status})`,
      );
    return done;
  }

  async ask(text: string, options: Partial<messages.SubmitInput> = {}): Promise<Run> {
    const run = await this.submit(text, options);
    return this.finished(run.run_id);
  }

  /** The run; a query that found no worker in time (a test that kills workers) is asked again. */
  async run(runId: string): Promise<Run> {
    const run = await this.#query(() => this.handle.query(messages.getRunQuery, { run_id: runId }));
    if (run === null) throw new Error(`no run ${runId}`);
    return run;
  }

  async #query<T>(ask: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await ask();
      } catch (error) {
        if (!isStall(error) || attempt >= 5) throw error;
      }
    }
  }

  thread(): Promise<Thread> {
    return this.handle.query(messages.getThreadQuery);
  }

  /** The transcript; fails the test if it ever breaks the tool_use/tool_result rule. */
  async transcript(): Promise<Message[]> {
    const transcript = await this.#query(() => this.handle.query(messages.getTranscriptQuery, {}));
    const violation = findTranscriptViolation(modelMessages({ transcript, compacted_messages: 0 } as never));
    if (violation !== undefined) throw new Error(`the stored transcript breaks the tool rule: ${violation}`);
    return transcript;
  }
}

export function toolResults(transcript: Message[]) {
  return transcript.flatMap((message) =>
    message.role === 'user' ? message.content.filter((block) => block.type === 'tool_result') : [],
  );
}

export function lastAnswer(transcript: Message[]): string {
  const message = [...transcript].reverse().find((candidate) => candidate.role === 'assistant');
  return message?.content.map((block) => (block.type === 'text' ? block.text : '')).join('') ?? '';
}
