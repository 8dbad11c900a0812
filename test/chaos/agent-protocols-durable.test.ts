/**
 * Keel's agents over MCP 2026-07-28 and A2A 1.0, durable (issue 34, decisions 0475, 0485, 0505),
 * against one real API process and real `keel worker` processes, killed with SIGKILL:
 * - a Tasks-extension task, started by the Python MCP SDK's client (test/python/mcp_tasks_client.py),
 *   whose worker is killed mid-task and whose API restarts between `tasks/get` calls completes
 *   once, and every client reads the same result;
 * - an MCP task (2025-11-25) and an A2A task waiting on an approval in a worker that is killed are
 *   answered on the next worker and complete once;
 * - A2A push notifications: the task when it comes to wait on an approval
 *   (`TASK_STATE_INPUT_REQUIRED`) and when it ends, with the config's `authentication`, each sent
 *   once although the worker was killed before either;
 * - a typewriter answer of seconds followed by a second A2A client that subscribes mid-run, and a
 *   Stop from the Keel API while an MCP client polls `tasks/get` and an A2A client streams.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Client as LangGraphClient } from '@langchain/langgraph-sdk';
import {
  SendMessageRequest,
  StreamResponse as StreamResponses,
  TaskState,
  type Message,
  type StreamResponse,
  type Task,
} from '@a2a-js/sdk';
import { ClientFactory, type Client as A2AClient } from '@a2a-js/sdk/client';
import { Client as McpClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import { call, processApiHarness, replaceKilledWorker, startTestApi } from '../helpers/api';
import { postMcpExtension } from '../helpers/mcp-extension';
import { ensurePythonMcp, hasPython } from '../helpers/python-sdk';
import { eventually } from '../helpers/temporal';
import { startReceiver } from '../helpers/push-receiver';

jest.setTimeout(120_000);

const pythonTasksClient = path.join(__dirname, '..', 'python', 'mcp_tasks_client.py');
const webhookSecret = `whsec_${Buffer.from('a2a pushes across a killed worker').toString('base64')}`;
const env = {
  KEEL_APPROVAL: 'require',
  KEEL_WEBHOOK_SECRET: webhookSecret,
  // The push receiver listens on loopback, which webhooks reach only when the operator allows it.
  KEEL_WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
};

const send = (text: string, taskId?: string) =>
  SendMessageRequest.fromJSON({
    message: {
      messageId: randomUUID(),
      role: 'ROLE_USER',
      parts: [{ text }],
      ...(taskId === undefined ? {} : { taskId }),
    },
  });
const sendAtOnce = (text: string) =>
  ({ ...send(text), configuration: { returnImmediately: true } }) as SendMessageRequest;

const textOf = (message: Message | undefined): string =>
  (message?.parts ?? []).map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');

type StatusUpdate = { status: { state: TaskState; message?: Message } };
const lastStatusOf = (events: StreamResponse[]) =>
  (events.filter(({ payload }) => payload?.$case === 'statusUpdate').at(-1)!.payload!.value as StatusUpdate)
    .status;

async function collect(stream: AsyncGenerator<StreamResponse>, seen: StreamResponse[] = []) {
  for await (const event of stream) seen.push(event);
  return seen;
}

interface ArtifactUpdate {
  artifact: { parts: Message['parts'] };
  append: boolean;
  lastChunk: boolean;
}
/** The answer artifact's text as a stream's chunks build it, and how many chunks came before the last. */
function streamedAnswerOf(events: StreamResponse[]) {
  let text = '';
  let chunks = 0;
  for (const { payload } of events) {
    if (payload?.$case !== 'artifactUpdate') continue;
    const update = payload.value as unknown as ArtifactUpdate;
    if (update.lastChunk) continue;
    const piece = textOf({ parts: update.artifact.parts } as Message);
    text = update.append ? text + piece : piece;
    chunks++;
  }
  return { text, chunks };
}

const aiMessagesOf = async (base: string, threadId: string) =>
  (
    await new LangGraphClient({ apiUrl: base }).threads.getState<{
      messages: Array<{ type: string; content: unknown }>;
    }>(threadId)
  ).values.messages.filter(({ type }) => type === 'ai');

describe('MCP and A2A tasks across killed workers, a restarted API, pushes and a Stop', () => {
  const harness = processApiHarness(() => env);
  /** SIGKILLs the worker and starts the next, which the harness then holds (and stops at its end). */
  const replaceWorker = async () => {
    harness.worker = await replaceKilledWorker(harness, env);
  };

  const a2a = (assistant = 'agent'): Promise<A2AClient> =>
    new ClientFactory().createFromUrl(`${harness.base}/a2a/${assistant}/.well-known/agent-card.json`, '');

  let nextId = 1;
  /** A 2026-07-28 request of MCP's Tasks extension, as the v2 client's bytes would frame it. */
  const extension = async (method: string, params: Record<string, unknown>) => {
    const answer = await postMcpExtension({
      base: harness.base,
      method,
      params,
      id: nextId++,
      clientName: 'keel-chaos-v2',
    });
    return (await answer.json()) as { result?: Record<string, unknown>; error?: { code: number } };
  };
  /** The task as `tasks/get` answers it, undefined while the API cannot answer. */
  const taskNow = async (taskId: string) =>
    (await extension('tasks/get', { taskId }).catch(() => undefined))?.result;
  const extensionTaskIn = (taskId: string, status: string, timeoutMs = 60_000) =>
    eventually(
      async () => {
        const task = await taskNow(taskId);
        return task?.status === status ? task : undefined;
      },
      timeoutMs,
      `task ${taskId} ${status}`,
    );

  /**
   * A 2026-07-28 `tools/call` answered with a task: by the Python MCP SDK's client, which resolves
   * the task through its extension hooks (test/python/mcp_tasks_client.py) and goes on polling
   * `tasks/get` through what follows; without Python, framed as the v2 client frames its own.
   */
  const startTask = async (message: string) => {
    if (!hasPython) {
      const created = await extension('tools/call', { name: 'agent', arguments: { message } });
      expect(created.result).toMatchObject({ resultType: 'task', status: 'working' });
      return { taskId: created.result!.taskId as string, python: undefined };
    }
    const python = spawn(await ensurePythonMcp(), [pythonTasksClient, `${harness.base}/mcp`, message], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    python.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const lines = createInterface({ input: python.stdout });
    const said: Array<Record<string, unknown>> = [];
    lines.on('line', (line) => said.push(JSON.parse(line) as Record<string, unknown>));
    const exited = once(python, 'exit');
    const { taskId } = await eventually(
      () => Promise.resolve(said[0] as { taskId: string } | undefined),
      30_000,
      'the Python client’s task',
    );
    const answer = exited.then(([code]) => {
      if (code !== 0) throw new Error(`the Python client exited ${String(code)}: ${stderr}`);
      return said[1] as { version: string; text: string; polls: number; failedPolls: number };
    });
    return { taskId, python: answer };
  };

  it('completes a 2026-07-28 task once although its worker is SIGKILLed mid-task and the API restarts between tasks/get calls; every client reads the same result', async () => {
    const { taskId, python } = await startTask('think: 3');
    const [threadId, runId] = taskId.split(':');
    // Mid-task: the model call is under way on the worker that is then killed.
    expect((await taskNow(taskId))?.status).toBe('working');
    await replaceWorker();
    expect((await taskNow(taskId))?.status).toBe('working');
    // A deploy: the API stops, and another takes its address while the clients poll.
    const { port } = new URL(harness.base);
    await harness.api.stop();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    harness.api = await startTestApi(harness.client, harness.config, Number(port));
    expect(harness.api.url).toBe(harness.base);

    const done = await extensionTaskIn(taskId, 'completed');
    const answer = (done.result as { content: Array<{ text: string }> }).content;
    expect(answer[0]!.text).toContain('think: 3');
    if (python !== undefined) {
      // The Python client's call resolved through the extension, across the restart.
      const pythons = await python;
      expect(pythons).toMatchObject({ version: '2026-07-28', text: answer[0]!.text });
      expect(pythons.failedPolls).toBeGreaterThan(0);
    }
    // The SDK v1 client (2025-11-25) reads the same result from the restarted API …
    const v1 = new McpClientV1({ name: 'keel-chaos-v1', version: '1.0.0' });
    await v1.connect(new StreamableHTTPClientTransport(new URL(`${harness.base}/mcp`)));
    try {
      const result = await v1.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      expect(result.content).toEqual(answer);
    } finally {
      await v1.close();
    }
    // … so does an A2A client (the run is the task there too), and the LangGraph SDK.
    const read = await (await a2a()).getTask({ tenant: '', id: taskId });
    expect(read.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(read.status?.message)).toBe(answer[0]!.text);
    const langGraph = new LangGraphClient({ apiUrl: harness.base });
    expect(await langGraph.runs.list(threadId!)).toEqual([
      expect.objectContaining({ run_id: runId, status: 'completed' }),
    ]);
    // Once: one answer on the thread, the killed attempt's none.
    expect(await aiMessagesOf(harness.base, threadId!)).toHaveLength(1);
  });

  it('pushes TASK_STATE_INPUT_REQUIRED and the end with the config’s authentication, each once, though the worker was SIGKILLed before either', async () => {
    const receiver = await startReceiver();
    try {
      const client = await a2a();
      const task = (await client.sendMessage(
        sendAtOnce('think: 3\nrun: echo pushed-through-a-kill'),
      )) as Task;
      await client.createTaskPushNotificationConfig({
        tenant: '',
        id: 'hook',
        taskId: task.id,
        url: `${receiver.url}/hook`,
        token: '',
        authentication: { scheme: 'Bearer', credentials: 'receiver-credential-1' },
      });
      // Killed while the model still thinks: the approval it asks for comes on the next worker.
      expect((await client.getTask({ tenant: '', id: task.id })).status?.state).toBe(
        TaskState.TASK_STATE_WORKING,
      );
      await replaceWorker();

      const pushed = (index: number) =>
        eventually(() => Promise.resolve(receiver.received[index]), 60_000, `push notification ${index + 1}`);
      const taskOf = (delivery: Awaited<ReturnType<typeof pushed>>) => {
        expect(delivery.path).toBe('/hook');
        expect(delivery.headers.authorization).toBe('Bearer receiver-credential-1');
        expect(delivery.headers['x-a2a-notification-token']).toBeUndefined();
        expect(delivery.headers['content-type']).toBe('application/a2a+json');
        const headers = Object.fromEntries(
          ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [
            name,
            String(delivery.headers[name]),
          ]),
        );
        const payload = StreamResponses.fromJSON(new Webhook(webhookSecret).verify(delivery.body, headers));
        expect(payload.payload?.$case).toBe('task');
        return payload.payload!.value as Task;
      };
      const asking = taskOf(await pushed(0));
      expect(asking.id).toBe(task.id);
      expect(asking.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      expect(textOf(asking.status?.message)).toContain('bash: {"command":"echo pushed-through-a-kill"}');

      const answered = (await client.sendMessage(send('approve', task.id))) as Task;
      expect(answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const ended = taskOf(await pushed(1));
      expect(ended.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(textOf(ended.status?.message)).toContain('pushed-through-a-kill');
      // Not doubled: a retry or replay would carry the same webhook-id; none came.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(receiver.received).toHaveLength(2);
      const ids = receiver.received.map(({ headers }) => String(headers['webhook-id']));
      expect(new Set(ids).size).toBe(2);
      expect(ids[0]).toMatch(/_input_required_/);
    } finally {
      await receiver.close();
    }
  });

  /** One run on the thread, and one tool call and one result in its messages: `echo`'s. */
  const ranOnce = async (threadId: string, output: string) => {
    const langGraph = new LangGraphClient({ apiUrl: harness.base });
    expect(await langGraph.runs.list(threadId)).toHaveLength(1);
    const state = await langGraph.threads.getState<{ messages: Array<{ type: string; content: unknown }> }>(
      threadId,
    );
    const toolMessages = state.values.messages.filter(({ type }) => type === 'tool');
    expect(toolMessages).toHaveLength(1);
    expect(String(toolMessages[0]!.content)).toBe(output);
  };

  it('completes an MCP task (2025-11-25) once, answered through tasks/update after the worker holding the waiting run was killed', async () => {
    const client = new McpClientV1({ name: 'keel-chaos', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${harness.base}/mcp`)));
    try {
      const { task } = await client.request(
        {
          method: 'tools/call',
          params: { name: 'agent', arguments: { message: 'run: echo survived-the-kill' }, task: {} },
        },
        CreateTaskResultSchema,
      );
      const detailedTask = z.looseObject({
        status: z.string(),
        inputRequests: z.record(z.string(), z.unknown()).optional(),
      });
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
      await replaceWorker();
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
      await ranOnce(task.taskId.split(':')[0]!, 'survived-the-kill\n');
    } finally {
      await client.close().catch(() => undefined);
    }
  });

  it('completes an A2A task once, answered by a message after the worker holding the waiting run was killed', async () => {
    const client = await a2a();
    const sent = (await client.sendMessage(send('run: echo survived-the-a2a-kill'))) as Task;
    expect(sent.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    await replaceWorker();
    await eventually(
      async () =>
        (await client.getTask({ tenant: '', id: sent.id }).catch(() => undefined))?.status?.state ===
        TaskState.TASK_STATE_INPUT_REQUIRED
          ? true
          : undefined,
      60_000,
      'task input-required again',
    );
    const answered = (await client.sendMessage(send('approve', sent.id))) as Task;
    expect(answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(answered.status?.message)).toContain('survived-the-a2a-kill');
    const read = await client.getTask({ tenant: '', id: sent.id });
    expect(textOf(read.status?.message)).toBe(textOf(answered.status?.message));
    await ranOnce(sent.contextId, 'survived-the-a2a-kill\n');
  });

  describe('a typewriter answer of seconds', () => {
    let typist: string;
    beforeAll(async () => {
      const created = await call<{ assistant_id: string }>(harness.base, 'POST', '/assistants', {
        graph_id: 'agent',
        name: 'typist',
        config: { configurable: { model: 'scripted:typewriter' } },
      });
      typist = created.body.assistant_id;
    });
    // The typewriter repeats up to 500 characters of the question, a token every 25 ms: 140 short
    // words take four seconds.
    const words = (count: number) => Array.from({ length: count }, (_, index) => `w${index % 10}`).join(' ');

    it('is followed to its end by a second A2A client that subscribes mid-run, with the same answer', async () => {
      const [first, second] = await Promise.all([a2a(typist), a2a(typist)]);
      const stream = first.sendMessageStream(send(words(140)));
      const opening = await stream.next();
      const openedAt = Date.now();
      expect(opening.value?.payload?.$case).toBe('task');
      const taskId = (opening.value!.payload!.value as Task).id;
      const firstEvents = collect(stream).then((events) => ({ events, endedAt: Date.now() }));
      // Joins once the answer is under way, seconds before it ends.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const joinedAt = Date.now();
      const theirs = await collect(second.resubscribeTask({ tenant: '', id: taskId }));
      const { events: ours, endedAt } = await firstEvents;
      expect(endedAt - openedAt).toBeGreaterThan(3_000);
      expect(endedAt - joinedAt).toBeGreaterThan(1_000);
      expect(theirs[0]?.payload?.$case).toBe('task');
      expect((theirs[0]!.payload!.value as Task).status?.state).toBe(TaskState.TASK_STATE_WORKING);
      const ourEnd = lastStatusOf(ours);
      const theirEnd = lastStatusOf(theirs);
      expect(ourEnd.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(theirEnd.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(textOf(theirEnd.message)).toBe(textOf(ourEnd.message));
      expect(textOf(theirEnd.message)).toContain('You said: “w0 w1 w2');
      // The answer came as it was typed, to both: from its start for the one that joined late.
      for (const events of [ours, theirs]) {
        const streamed = streamedAnswerOf(events);
        expect(streamed.text).toBe(textOf(theirEnd.message));
        expect(streamed.chunks).toBeGreaterThan(10);
      }
    });

    it('is stopped from the Keel API while an MCP client polls tasks/get and an A2A client streams: both see it cancelled, nothing hangs', async () => {
      const client = await a2a(typist);
      const stream = client.sendMessageStream(send(words(250)));
      const opening = await stream.next();
      const taskId = (opening.value!.payload!.value as Task).id;
      const streamed = collect(stream);
      const [threadId, runId] = taskId.split(':');
      // MCP reads the same run as a task: working while the answer is typed.
      await extensionTaskIn(taskId, 'working', 30_000);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const polling = extensionTaskIn(taskId, 'cancelled', 15_000);

      const stoppedAt = Date.now();
      const stop = await call(harness.base, 'POST', `/threads/${threadId}/runs/${runId}/cancel`);
      expect(stop.status).toBeLessThan(300);
      const [events, cancelled] = await Promise.all([streamed, polling]);
      expect(Date.now() - stoppedAt).toBeLessThan(10_000);
      expect(lastStatusOf(events).state).toBe(TaskState.TASK_STATE_CANCELED);
      expect(cancelled).toMatchObject({ status: 'cancelled' });
      expect((await client.getTask({ tenant: '', id: taskId })).status?.state).toBe(
        TaskState.TASK_STATE_CANCELED,
      );
    });
  });
});
