/**
 * Keel's agents over A2A 1.0 (issue 34, decision 0445), driven by the official A2A JavaScript
 * SDK's client (`@a2a-js/sdk`, JSON-RPC) against the real API, worker and Temporal dev server:
 * the context is the thread, the task is the run, and the LangGraph SDK sees the same runs.
 */
import { Client as LangGraphClient } from '@langchain/langgraph-sdk';
import {
  SendMessageRequest,
  StreamResponse as StreamResponses,
  TaskState,
  type Message,
  type StreamResponse,
  type Task,
} from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { ClientFactoryOptions, DefaultAgentCardResolver } from '@a2a-js/sdk/client';
import { A2AError } from '@a2a-js/sdk/errors';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Webhook } from 'standardwebhooks';
import { apiHarness, call, rejectionOf, runStatusOfTask, startTestApi } from '../helpers/api';
import { eventually } from '../helpers/temporal';
import { startReceiver } from '../helpers/push-receiver';

jest.setTimeout(120_000);

const aliceToken = 'alice-token-0123456789';
const bobToken = 'bob-token-0123456789';
const webhookSecret = `whsec_${Buffer.from('a2a push notifications test key!').toString('base64')}`;

/** `fetch` carrying `token`, as an A2A client sends its credentials. */
const fetchWith =
  (token: string): typeof fetch =>
  (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };

const send = (text: string, extra: { contextId?: string; taskId?: string; data?: unknown } = {}) =>
  SendMessageRequest.fromJSON({
    message: {
      messageId: randomUUID(),
      role: 'ROLE_USER',
      parts: [extra.data === undefined ? { text } : { data: extra.data }],
      ...(extra.contextId === undefined ? {} : { contextId: extra.contextId }),
      ...(extra.taskId === undefined ? {} : { taskId: extra.taskId }),
    },
  });

const textOf = (message: Message | undefined): string =>
  (message?.parts ?? []).map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');

const asTask = (result: Message | Task): Task => {
  expect('messageId' in result).toBe(false);
  return result as Task;
};

async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('agents over A2A at /a2a/{assistant_id}', () => {
  const harness = apiHarness(() => ({
    KEEL_APPROVAL: 'require',
    KEEL_API_TOKENS: `alice:${aliceToken},bob:${bobToken}`,
    KEEL_WEBHOOK_SECRET: webhookSecret,
    // The push receiver listens on loopback, which webhooks reach only when the operator allows it.
    KEEL_WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
  }));

  const connect = (token = aliceToken, assistant = 'agent', base = harness.base): Promise<Client> => {
    const fetchImpl = fetchWith(token);
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory({ fetchImpl })],
        cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      }),
    );
    return factory.createFromUrl(`${base}/a2a/${assistant}/.well-known/agent-card.json`, '');
  };
  const stateOf = async (client: Client, id: string) =>
    (await client.getTask({ tenant: '', id })).status?.state;
  const taskIn = (client: Client, id: string, state: TaskState) =>
    eventually(
      async () => ((await stateOf(client, id)) === state ? true : undefined),
      30_000,
      `task ${state}`,
    );
  const errorOf = (promise: Promise<unknown>): Promise<A2AError & { code?: number }> =>
    rejectionOf(promise, A2AError);

  it('serves the agent card: the default one in public, an assistant’s behind its token, skills from the assistant', async () => {
    const open = await fetch(`${harness.base}/.well-known/agent-card.json`);
    expect(open.status).toBe(200);
    expect(await open.json()).toMatchObject({
      name: 'agent',
      supportedInterfaces: [
        { url: `${harness.base}/a2a/agent`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      ],
      capabilities: { streaming: true, pushNotifications: true },
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
      skills: [{ id: 'agent' }],
    });
    const created = await call<{ assistant_id: string }>(
      harness.base,
      'POST',
      '/assistants',
      { graph_id: 'agent', name: 'reviewer', description: 'Reviews what it is shown' },
      { authorization: `Bearer ${aliceToken}` },
    );
    const id = created.body.assistant_id;
    const path = `${harness.base}/a2a/${id}/.well-known/agent-card.json`;
    expect((await fetch(path)).status).toBe(401);
    expect((await fetch(path, { headers: { authorization: `Bearer ${bobToken}` } })).status).toBe(404);
    const client = await connect(aliceToken, id);
    const card = await client.getAgentCard();
    expect(card.skills).toEqual([
      expect.objectContaining({ id, name: 'reviewer', description: 'Reviews what it is shown' }),
    ]);
    const answer = asTask(await client.sendMessage(send('hello reviewer')));
    expect(answer.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(answer.metadata).toMatchObject({ 'keel/assistant_id': id });
  });

  it('answers a blocking SendMessage with the completed task, as a run the LangGraph SDK sees, and continues its context', async () => {
    const client = await connect();
    const task = asTask(await client.sendMessage(send('hello over A2A')));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(task.status?.message)).toContain('You said: “hello over A2A”');
    expect(task.artifacts[0]?.parts[0]?.content).toEqual({
      $case: 'text',
      value: textOf(task.status?.message),
    });
    const [threadId, runId] = task.id.split(':');
    expect(task.contextId).toBe(threadId);

    const langGraph = new LangGraphClient({ apiUrl: harness.base, apiKey: aliceToken });
    expect(await langGraph.runs.get(threadId!, runId!)).toMatchObject({
      status: 'completed',
      metadata: { source: 'a2a' },
    });
    // And the other way: a run made by the LangGraph SDK on that thread is a task of its context.
    const viaLangGraph = await langGraph.runs.wait(threadId!, 'agent', {
      input: { messages: [{ role: 'user', content: 'second turn over LangGraph' }] },
    });
    expect(viaLangGraph).toBeDefined();
    const listed = await client.listTasks({
      tenant: '',
      contextId: threadId!,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: '',
      statusTimestampAfter: undefined,
    });
    expect(listed.tasks).toHaveLength(2);
    const other = listed.tasks.find(({ id }) => id !== task.id)!;
    expect(other.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf((await client.getTask({ tenant: '', id: other.id })).status?.message)).toContain(
      'second turn over LangGraph',
    );
    // A message naming the context is a new turn on the same thread.
    const third = asTask(await client.sendMessage(send('third turn', { contextId: threadId! })));
    expect(third.contextId).toBe(threadId);
    expect(await langGraph.runs.list(threadId!)).toHaveLength(3);
  });

  it('streams a task to its end, and a second client subscribing mid-run gets the same result', async () => {
    const client = await connect();
    const second = await connect();
    const stream = client.sendMessageStream(send('think: 3'));
    const first = await stream.next();
    expect(first.value?.payload?.$case).toBe('task');
    const taskId = (first.value!.payload as { value: Task }).value.id;
    const subscribed = collect(second.resubscribeTask({ tenant: '', id: taskId }));
    const rest = await collect(stream);
    const last = rest.at(-1)!.payload!;
    expect(last.$case).toBe('statusUpdate');
    const finalStatus = (last as { value: { status: { state: TaskState; message: Message } } }).value.status;
    expect(finalStatus.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(rest.some(({ payload }) => payload?.$case === 'artifactUpdate')).toBe(true);

    const seen = await subscribed;
    expect(seen[0]?.payload?.$case).toBe('task');
    const theirs = (seen.at(-1)!.payload as { value: { status: { state: TaskState; message: Message } } })
      .value.status;
    expect(theirs.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(theirs.message)).toBe(textOf(finalStatus.message));
    // An ended task is read, not subscribed to.
    const ended = await errorOf(collect(second.resubscribeTask({ tenant: '', id: taskId })));
    expect(ended.name).toBe('UnsupportedOperationError');
  });

  it('asks for approval as TASK_STATE_INPUT_REQUIRED, answered by a follow-up message on the task', async () => {
    const client = await connect();
    const waiting = asTask(await client.sendMessage(send('run: echo over-a2a')));
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(textOf(waiting.status?.message)).toContain('bash: {"command":"echo over-a2a"}');
    // Bob cannot see it.
    const bob = await connect(bobToken);
    expect((await errorOf(bob.getTask({ tenant: '', id: waiting.id }))).name).toBe('TaskNotFoundError');
    // A streamed answer: an edit, given as a data part.
    const answered = await collect(
      client.sendMessageStream(
        send('', {
          taskId: waiting.id,
          data: { decision: 'edit', input: { command: 'echo edited-over-a2a' } },
        }),
      ),
    );
    const last = answered.at(-1)!.payload as { value: { status: { state: TaskState; message: Message } } };
    expect(last.value.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(last.value.status.message)).toContain('edited-over-a2a');

    // A blocking answer: a denial with a reason, in words.
    const again = asTask(await client.sendMessage(send('run: echo never')));
    expect(again.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const denied = asTask(await client.sendMessage(send('deny: not on a Friday', { taskId: again.id })));
    expect(denied.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(denied.status?.message)).toContain('not on a Friday');
    // An ended task takes no more messages.
    const late = await errorOf(client.sendMessage(send('approve', { taskId: again.id })));
    expect(late.name).toBe('UnsupportedOperationError');
  });

  it('cancels a task: the run is cancelled, and a second cancel is refused', async () => {
    const client = await connect();
    const task = asTask(
      await client.sendMessage({
        ...send('think: 30'),
        configuration: { returnImmediately: true },
      } as SendMessageRequest),
    );
    await taskIn(client, task.id, TaskState.TASK_STATE_WORKING);
    const cancelled = await client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(await runStatusOfTask(harness.base, task.id, aliceToken)).toBe('cancelled');
    expect((await errorOf(client.cancelTask({ tenant: '', id: task.id, metadata: undefined }))).name).toBe(
      'TaskNotCancelableError',
    );
  });

  it('reads the same task after the API restarts between GetTask calls: the run lives in Temporal', async () => {
    const client = await connect();
    const task = asTask(
      await client.sendMessage({
        ...send('think: 3'),
        configuration: { returnImmediately: true },
      } as SendMessageRequest),
    );
    expect(await stateOf(client, task.id)).not.toBe(TaskState.TASK_STATE_COMPLETED);
    await harness.api.stop();
    harness.api = await startTestApi(harness.client, harness.config);
    harness.base = harness.api.url;
    const afterRestart = await connect();
    await taskIn(afterRestart, task.id, TaskState.TASK_STATE_COMPLETED);
    const read = await afterRestart.getTask({ tenant: '', id: task.id });
    expect(textOf(read.status?.message)).toContain('think: 3');
  });

  it('pushes the task’s end to a registered config, signed as Keel’s webhooks are, with its token; get, list and delete work; a private address is refused', async () => {
    const receiver = await startReceiver();
    try {
      const client = await connect();
      const waiting = asTask(await client.sendMessage(send('run: echo pushed-over-a2a')));
      expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      const config = (id: string, url: string, token = '') => ({
        tenant: '',
        id,
        taskId: waiting.id,
        url,
        token,
        authentication: undefined,
      });
      const hook = await client.createTaskPushNotificationConfig(
        config('hook', `${receiver.url}/hook`, 'notify-token-1'),
      );
      expect(hook).toMatchObject({ id: 'hook', taskId: waiting.id, token: 'notify-token-1' });
      await client.createTaskPushNotificationConfig(config('other', `${receiver.url}/other`));
      const ids = async () =>
        (
          await client.listTaskPushNotificationConfig({
            tenant: '',
            taskId: waiting.id,
            pageSize: 0,
            pageToken: '',
          })
        ).configs
          .map(({ id }) => id)
          .sort();
      expect(await ids()).toEqual(['hook', 'other']);
      expect(
        await client.getTaskPushNotificationConfig({ tenant: '', taskId: waiting.id, id: 'hook' }),
      ).toMatchObject({ url: `${receiver.url}/hook`, token: 'notify-token-1' });
      // Kept on the thread's workflow, not in the API: a second API process reads and deletes them.
      const second = await startTestApi(harness.client, harness.config);
      try {
        const elsewhere = await connect(aliceToken, 'agent', second.url);
        await elsewhere.deleteTaskPushNotificationConfig({ tenant: '', taskId: waiting.id, id: 'other' });
      } finally {
        await second.stop();
      }
      expect(await ids()).toEqual(['hook']);
      expect(
        (await errorOf(client.getTaskPushNotificationConfig({ tenant: '', taskId: waiting.id, id: 'other' })))
          .name,
      ).toBe('TaskNotFoundError');
      // Deleting it again does nothing, as the SDK's own handler does.
      await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: waiting.id, id: 'other' });
      // Bob cannot reach the task; a private address the operator did not allow is refused.
      const bob = await connect(bobToken);
      expect(
        (
          await errorOf(
            bob.listTaskPushNotificationConfig({
              tenant: '',
              taskId: waiting.id,
              pageSize: 0,
              pageToken: '',
            }),
          )
        ).name,
      ).toBe('TaskNotFoundError');
      const refused = await fetch(`${harness.base}/a2a/agent`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'a2a-version': '1.0',
          authorization: `Bearer ${aliceToken}`,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'CreateTaskPushNotificationConfig',
          params: { taskId: waiting.id, id: 'private', url: 'http://10.0.0.1/hook' },
        }),
      });
      const answer = (await refused.json()) as { error?: { code: number; message: string } };
      expect(answer.error).toMatchObject({
        code: -32602,
        message: expect.stringContaining('KEEL_WEBHOOK_ALLOW_HOSTS'),
      });
      expect(await ids()).toEqual(['hook']);

      const done = asTask(await client.sendMessage(send('approve', { taskId: waiting.id })));
      expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const [delivery] = await eventually(
        () => Promise.resolve(receiver.received.length > 0 ? receiver.received : undefined),
        30_000,
        'the push notification',
      );
      expect(delivery!.path).toBe('/hook');
      expect(delivery!.headers['x-a2a-notification-token']).toBe('notify-token-1');
      expect(delivery!.headers['content-type']).toBe('application/a2a+json');
      const headers = Object.fromEntries(
        ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [
          name,
          String(delivery!.headers[name]),
        ]),
      );
      const body = new Webhook(webhookSecret).verify(delivery!.body, headers);
      const pushed = StreamResponses.fromJSON(body);
      expect(pushed.payload?.$case).toBe('task');
      const task = pushed.payload?.value as Task;
      expect(task.id).toBe(waiting.id);
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(textOf(task.status?.message)).toContain('pushed-over-a2a');
      // Delivered once, and the ended task keeps no configs and takes no more.
      expect(receiver.received).toHaveLength(1);
      expect(await ids()).toEqual([]);
      expect(
        (await errorOf(client.createTaskPushNotificationConfig(config('late', `${receiver.url}/late`)))).name,
      ).toBe('UnsupportedOperationError');
    } finally {
      await receiver.close();
    }
  });

  it('lists the caller’s tasks across her contexts without a contextId, newest first and paged, and no one else’s', async () => {
    const bob = await connect(bobToken);
    const first = asTask(await bob.sendMessage(send('bob’s first context')));
    const second = asTask(await bob.sendMessage(send('bob’s second context')));
    expect(second.contextId).not.toBe(first.contextId);
    const page = (pageToken: string, pageSize?: number) =>
      bob.listTasks({
        tenant: '',
        contextId: '',
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageToken,
        statusTimestampAfter: undefined,
        ...(pageSize === undefined ? {} : { pageSize }),
      });
    // The thread list is Temporal's visibility, which may lag a moment behind a new thread.
    const one = await eventually(
      async () => {
        const listed = await page('', 1);
        return listed.totalSize === 2 ? listed : undefined;
      },
      30_000,
      'both of bob’s contexts listed',
    );
    expect(one.tasks.map(({ id }) => id)).toEqual([second.id]);
    expect(one.nextPageToken).toBe('1');
    const two = await page(one.nextPageToken, 1);
    expect(two.tasks.map(({ id }) => id)).toEqual([first.id]);
    expect(two.nextPageToken).toBe('');
    expect(two.tasks[0]?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // Alice's list holds none of bob's tasks.
    const alice = await connect();
    const hers = await alice.listTasks({
      tenant: '',
      contextId: '',
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: '',
      statusTimestampAfter: undefined,
      pageSize: 100,
    });
    expect(hers.tasks.map(({ id }) => id)).not.toEqual(expect.arrayContaining([first.id]));
    expect(hers.tasks.map(({ id }) => id)).not.toEqual(expect.arrayContaining([second.id]));
  });

  it('answers bad input with A2A’s and JSON-RPC’s own error codes, and holds the API doors', async () => {
    const client = await connect();
    expect((await errorOf(client.getTask({ tenant: '', id: 'no-such-thread:no-such-run' }))).name).toBe(
      'TaskNotFoundError',
    );
    expect((await errorOf(client.getTask({ tenant: '', id: 'not a task' }))).name).toBe('TaskNotFoundError');
    const rpc = async (body: string, headers: Record<string, string> = {}) => {
      const answer = await fetch(`${harness.base}/a2a/agent`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'a2a-version': '1.0',
          authorization: `Bearer ${aliceToken}`,
          ...headers,
        },
        body,
      });
      return { status: answer.status, body: (await answer.json()) as { error?: { code: number } } };
    };
    expect((await rpc('{"jsonrpc": "2.0", "id": 1,')).body.error?.code).toBe(-32700);
    const push = {
      jsonrpc: '2.0',
      id: 1,
      method: 'CreateTaskPushNotificationConfig',
      params: { taskId: 'x:y', url: 'https://example.com/hook' },
    };
    expect((await rpc(JSON.stringify(push))).body.error?.code).toBe(-32001);
    expect(
      (await rpc(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: {} }))).body.error
        ?.code,
    ).toBe(-32601);
    const noParts = {
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [] } },
    };
    expect((await rpc(JSON.stringify(noParts))).body.error?.code).toBe(-32602);
    const badContext = {
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: 'm', role: 'ROLE_USER', contextId: '../x', parts: [{ text: 'hi' }] } },
    };
    expect((await rpc(JSON.stringify(badContext))).body.error?.code).toBe(-32602);
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} });
    expect((await rpc(list)).body).toMatchObject({ result: { tasks: expect.any(Array) } });
    const badPage = { jsonrpc: '2.0', id: 1, method: 'ListTasks', params: { pageToken: 'x' } };
    expect((await rpc(JSON.stringify(badPage))).body.error?.code).toBe(-32602);
    expect((await rpc(list, { 'a2a-version': '0.3' })).body.error?.code).toBe(-32009);
    // The doors: a token, the Host check, the Origin check.
    expect((await rpc(list, { authorization: '' })).status).toBe(401);
    expect((await rpc(list, { origin: 'http://evil.example' })).status).toBe(403);
    // A rebound host name (fetch cannot send another Host): 421 before anything is read.
    const rebound = await new Promise<number>((resolve, reject) => {
      const sent = httpRequest(`${harness.base}/a2a/agent`, {
        method: 'POST',
        headers: {
          host: 'evil.example:8080',
          'content-type': 'application/json',
          authorization: `Bearer ${aliceToken}`,
        },
      });
      sent.on('error', reject);
      sent.on('response', (answer) => {
        answer.resume();
        resolve(answer.statusCode ?? 0);
      });
      sent.end(list);
    });
    expect(rebound).toBe(421);
    expect(
      (await fetch(`${harness.base}/a2a/agent`, { headers: { authorization: `Bearer ${aliceToken}` } }))
        .status,
    ).toBe(405);
    expect(
      (
        await fetch(`${harness.base}/a2a/nobody/.well-known/agent-card.json`, {
          headers: { authorization: `Bearer ${aliceToken}` },
        })
      ).status,
    ).toBe(404);
  });
});
