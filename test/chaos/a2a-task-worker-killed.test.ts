/**
 * An A2A task survives its worker killed with SIGKILL (issue 34, decision 0445): the run waits on
 * an approval in a real `keel worker` process, the process is killed, another takes over, and a
 * follow-up message on the task answers the approval: the task completes once, read by the
 * official A2A client.
 */
import { randomUUID } from 'node:crypto';
import { Client as LangGraphClient } from '@langchain/langgraph-sdk';
import { SendMessageRequest, TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { processApiHarness, replaceKilledWorker } from '../helpers/api';
import { eventually } from '../helpers/temporal';
import type { WorkerProcess } from '../helpers/worker-process';

jest.setTimeout(180_000);

const message = (text: string, taskId?: string) =>
  SendMessageRequest.fromJSON({
    message: {
      messageId: randomUUID(),
      role: 'ROLE_USER',
      parts: [{ text }],
      ...(taskId === undefined ? {} : { taskId }),
    },
  });

const textOf = (status: Task['status']): string =>
  (status?.message?.parts ?? [])
    .map((part) => (part.content?.$case === 'text' ? part.content.value : ''))
    .join('');

describe('an A2A task across a worker killed with SIGKILL', () => {
  const harness = processApiHarness(() => ({ KEEL_APPROVAL: 'require' }));
  let next: WorkerProcess | undefined;
  let client: Client;

  beforeAll(async () => {
    client = await new ClientFactory().createFromUrl(
      `${harness.base}/a2a/agent/.well-known/agent-card.json`,
      '',
    );
  });
  afterAll(async () => {
    next?.kill('SIGKILL');
    await next?.exited;
  });

  it('completes once, answered by a message after the worker holding the waiting run was killed', async () => {
    const sent = (await client.sendMessage(message('run: echo survived-the-kill'))) as Task;
    expect(sent.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const stateOf = async () =>
      (await client.getTask({ tenant: '', id: sent.id }).catch(() => undefined))?.status?.state;

    next = await replaceKilledWorker(harness, { KEEL_APPROVAL: 'require' });
    await eventually(
      async () => ((await stateOf()) === TaskState.TASK_STATE_INPUT_REQUIRED ? true : undefined),
      60_000,
      'task input-required again',
    );

    const answered = (await client.sendMessage(message('approve', sent.id))) as Task;
    expect(answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(answered.status)).toContain('survived-the-kill');
    const read = await client.getTask({ tenant: '', id: sent.id });
    expect(textOf(read.status)).toBe(textOf(answered.status));

    // Once: one run on the thread, one tool call and one result in its messages.
    const langGraph = new LangGraphClient({ apiUrl: harness.base });
    expect(await langGraph.runs.list(sent.contextId)).toHaveLength(1);
    const state = await langGraph.threads.getState<{ messages: Array<{ type: string; content: unknown }> }>(
      sent.contextId,
    );
    const toolMessages = state.values.messages.filter(({ type }) => type === 'tool');
    expect(toolMessages).toHaveLength(1);
    expect(String(toolMessages[0]!.content)).toBe('survived-the-kill\n');
  });
});
