/**
 * An MCP task survives its worker killed with SIGKILL (issue 34, decision 0430): the run waits
 * on an approval in a real `keel worker` process, the process is killed, another takes over, and
 * the task is answered with `tasks/update` and completes once, read by the official MCP client.
 */
import { Client as LangGraphClient } from '@langchain/langgraph-sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { processApiHarness, replaceKilledWorker } from '../helpers/api';
import { eventually } from '../helpers/temporal';
import type { WorkerProcess } from '../helpers/worker-process';

jest.setTimeout(120_000);

const detailedTask = z.looseObject({
  status: z.string(),
  inputRequests: z.record(z.string(), z.unknown()).optional(),
});

describe('an MCP task across a worker killed with SIGKILL', () => {
  const harness = processApiHarness(() => ({ KEEL_APPROVAL: 'require' }));
  let next: WorkerProcess | undefined;
  let client: Client;

  beforeAll(async () => {
    client = new Client({ name: 'keel-chaos', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${harness.base}/mcp`)));
  });
  afterAll(async () => {
    await client.close().catch(() => undefined);
    next?.kill('SIGKILL');
    await next?.exited;
  });

  it('completes once, answered through tasks/update after the worker holding the waiting run was killed', async () => {
    const { task } = await client.request(
      {
        method: 'tools/call',
        params: { name: 'agent', arguments: { message: 'run: echo survived-the-kill' }, task: {} },
      },
      CreateTaskResultSchema,
    );
    const taskIn = (status: string) =>
      eventually(
        async () => {
          const current = await client
            .request({ method: 'tasks/get', params: { taskId: task.taskId } }, detailedTask)
            .catch(() => undefined);
          return current?.status === status ? current : undefined;
        },
        60_000,
        `task ${status}`,
      );
    await taskIn('input_required');

    next = await replaceKilledWorker(harness, { KEEL_APPROVAL: 'require' });

    const waiting = await taskIn('input_required');
    const [approvalId] = Object.keys(waiting.inputRequests ?? {});
    await client.request(
      {
        method: 'tasks/update',
        params: { taskId: task.taskId, inputResponses: { [approvalId!]: { action: 'accept' } } },
      },
      z.looseObject({}),
    );
    await taskIn('completed');
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect((result.content[0] as { text: string }).text).toContain('survived-the-kill');

    // Once: one run on the thread, one tool call and one result in its messages.
    const [threadId] = task.taskId.split(':');
    const langGraph = new LangGraphClient({ apiUrl: harness.base });
    expect(await langGraph.runs.list(threadId!)).toHaveLength(1);
    const state = await langGraph.threads.getState<{ messages: Array<{ type: string; content: unknown }> }>(
      threadId!,
    );
    const toolMessages = state.values.messages.filter(({ type }) => type === 'tool');
    expect(toolMessages).toHaveLength(1);
    expect(String(toolMessages[0]!.content)).toBe('survived-the-kill\n');
  });
});
