/**
 * Keel's agents over MCP (issue 34, decisions 0430, 0475), driven by the official MCP TypeScript
 * SDK's clients against one real API, worker and Temporal dev server: v1 (1.32.2, revision
 * 2025-11-25, its tasks) and v2 (2.4.0, revision 2026-07-28 negotiated by `server/discover`, the
 * Tasks extension). Tools are assistants, a call is a run, a task is that run, durable across an
 * API restart.
 */
import { execFile } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { promisify } from 'node:util';
import { Client as LangGraphClient } from '@langchain/langgraph-sdk';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ErrorCode,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import {
  Client as ClientV2,
  ProtocolError,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from '@modelcontextprotocol/client';
import { z } from 'zod';
import { ensurePythonMcp, hasPython, pythonMcpVersion } from '../helpers/python-sdk';
import { apiHarness, call, rejectionOf, runStatusOfTask, startTestApi } from '../helpers/api';
import { postMcpExtension } from '../helpers/mcp-extension';
import { eventually } from '../helpers/temporal';

jest.setTimeout(120_000);

const aliceToken = 'alice-token-0123456789';
const bobToken = 'bob-token-0123456789';

/** `tasks/get`'s answer, kept whole (the SDK's own schema drops the extension's `inputRequests`). */
const detailedTask = z.looseObject({
  taskId: z.string(),
  status: z.string(),
  statusMessage: z.string().optional(),
  inputRequests: z.record(z.string(), z.looseObject({ method: z.string() })).optional(),
});
type DetailedTask = z.infer<typeof detailedTask>;

interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** A POST to /mcp as bytes, with headers `fetch` would not send (Host). */
function rawPost(base: string, headers: Record<string, string>, body: string) {
  return new Promise<RawAnswer>((resolve, reject) => {
    const sent = httpRequest(`${base}/mcp`, {
      method: 'POST',
      headers: { ...headers, 'content-length': Buffer.byteLength(body) },
    });
    sent.on('error', reject);
    sent.on('response', (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text }),
      );
    });
    sent.end(body);
  });
}

/** The JSON-RPC message of an answer: a JSON body, or the one `data:` of an SSE answer (2025-era). */
const messageOf = (text: string): unknown => {
  const data = text.split('\n').find((line) => line.startsWith('data: '));
  return JSON.parse(data === undefined ? text : data.slice('data: '.length));
};

const mcpHeaders = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  authorization: `Bearer ${aliceToken}`,
};

describe('agents over MCP at /mcp', () => {
  const harness = apiHarness(() => ({
    KEEL_APPROVAL: 'require',
    KEEL_API_TOKENS: `alice:${aliceToken},bob:${bobToken}`,
  }));
  const clients: Client[] = [];

  const connect = async (token = aliceToken, base = harness.base): Promise<Client> => {
    const client = new Client({ name: 'keel-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    clients.push(client);
    return client;
  };
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  });

  const startTask = async (client: Client, message: string): Promise<string> => {
    const created = await client.request(
      { method: 'tools/call', params: { name: 'agent', arguments: { message }, task: {} } },
      CreateTaskResultSchema,
    );
    expect(created.task.status).toBe('working');
    return created.task.taskId;
  };
  const getTask = (client: Client, taskId: string): Promise<DetailedTask> =>
    client.request({ method: 'tasks/get', params: { taskId } }, detailedTask);
  const taskIn = (client: Client, taskId: string, status: string, timeoutMs = 30_000) =>
    eventually(
      async () => {
        const task = await getTask(client, taskId);
        return task.status === status ? task : undefined;
      },
      timeoutMs,
      `task ${taskId} ${status}`,
    );
  const updateTask = (client: Client, taskId: string, inputResponses: Record<string, unknown>) =>
    client.request({ method: 'tasks/update', params: { taskId, inputResponses } }, z.looseObject({}));
  const errorOf = (promise: Promise<unknown>) => rejectionOf(promise, McpError);

  it('lists each assistant as a tool and answers a blocking call with the final message, as a run the LangGraph SDK sees', async () => {
    const created = await call<{ assistant_id: string }>(
      harness.base,
      'POST',
      '/assistants',
      { graph_id: 'agent', name: 'reviewer', description: 'Reviews what it is shown' },
      { authorization: `Bearer ${aliceToken}` },
    );
    expect(created.status).toBe(200);
    const client = await connect();
    const tools = await eventually(async () => {
      const listed = await client.listTools();
      return listed.tools.some(({ name }) => name === 'reviewer') ? listed.tools : undefined;
    });
    expect(tools.find(({ name }) => name === 'agent')).toMatchObject({
      inputSchema: { type: 'object', required: ['message'] },
      execution: { taskSupport: 'optional' },
    });
    expect(tools.find(({ name }) => name === 'reviewer')).toMatchObject({
      title: 'reviewer',
      description: expect.stringContaining('Reviews what it is shown') as unknown,
      _meta: { 'keel/assistant_id': created.body.assistant_id },
    });
    // Bob's token lists the default agent, not Alice's assistant.
    const bobs = await (await connect(bobToken)).listTools();
    expect(bobs.tools.map(({ name }) => name)).toEqual(['agent']);

    const result = await client.callTool({ name: 'reviewer', arguments: { message: 'hello over MCP' } });
    expect(result.isError).toBeFalsy();
    expect((result.content as Array<{ text: string }>)[0]!.text).toContain('You said: “hello over MCP”');
    const threadId = result._meta!['keel/thread_id'] as string;
    const runId = result._meta!['keel/run_id'] as string;

    const langGraph = new LangGraphClient({ apiUrl: harness.base, apiKey: aliceToken });
    expect(await langGraph.runs.get(threadId, runId)).toMatchObject({
      status: 'completed',
      assistant_id: created.body.assistant_id,
    });
    // A named thread continues: the second turn lands on the same thread.
    const again = await client.callTool({
      name: 'agent',
      arguments: { message: 'second turn', thread_id: threadId },
    });
    expect(again._meta).toMatchObject({ 'keel/thread_id': threadId });
    const runs = await langGraph.runs.list(threadId);
    expect(runs).toHaveLength(2);
  });

  it('answers a blocking call whose run waits on an approval at once, saying so, and the run goes on as a task', async () => {
    const client = await connect();
    const answer = await client.callTool({ name: 'agent', arguments: { message: 'run: echo blocked-call' } });
    expect(answer.isError).toBe(true);
    const text = (answer.content as Array<{ text: string }>)[0]!.text;
    expect(text).toContain('waits for approval of bash: {"command":"echo blocked-call"}');
    const taskId = `${answer._meta!['keel/thread_id'] as string}:${answer._meta!['keel/run_id'] as string}`;
    expect(text).toContain(taskId);
    const waiting = await getTask(client, taskId);
    expect(waiting.status).toBe('input_required');
    const [approvalId] = Object.keys(waiting.inputRequests ?? {});
    await updateTask(client, taskId, { [approvalId!]: { action: 'accept' } });
    await taskIn(client, taskId, 'completed');
  });

  it('runs a call as a task: input_required for an approval, answered with tasks/update (edit), read by a second client, then completed', async () => {
    const client = await connect();
    const taskId = await startTask(client, 'run: echo from-the-model');
    const waiting = await taskIn(client, taskId, 'input_required');
    expect(waiting.statusMessage).toContain('echo from-the-model');
    const [approvalId] = Object.keys(waiting.inputRequests ?? {});
    expect(waiting.inputRequests![approvalId!]).toMatchObject({ method: 'elicitation/create' });

    const second = await connect();
    expect((await getTask(second, taskId)).status).toBe('input_required');
    // Bob cannot see Alice's task: to him it does not exist.
    const bob = await connect(bobToken);
    const hidden = await errorOf(getTask(bob, taskId));
    expect(hidden.code).toBe(ErrorCode.InvalidParams);
    expect(hidden.message).toContain('not found');

    const unknownKey = await errorOf(updateTask(client, taskId, { nope: { action: 'accept' } }));
    expect(unknownKey.code).toBe(ErrorCode.InvalidParams);
    await updateTask(second, taskId, {
      [approvalId!]: {
        action: 'accept',
        content: { decision: 'edit', input: JSON.stringify({ command: 'echo edited-over-mcp' }) },
      },
    });
    await taskIn(client, taskId, 'completed');
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.isError).toBeFalsy();
    expect((result.content[0] as { text: string }).text).toContain('edited-over-mcp');
    expect(await second.experimental.tasks.getTaskResult(taskId, CallToolResultSchema)).toEqual(result);
  });

  it('denies an approval with a reason through tasks/update, and the run tells the model why', async () => {
    const client = await connect();
    const taskId = await startTask(client, 'run: echo never');
    const waiting = await taskIn(client, taskId, 'input_required');
    const [approvalId] = Object.keys(waiting.inputRequests ?? {});
    await updateTask(client, taskId, {
      [approvalId!]: { action: 'accept', content: { decision: 'deny', reason: 'not on a Friday' } },
    });
    await taskIn(client, taskId, 'completed');
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect((result.content[0] as { text: string }).text).toContain('not on a Friday');
  });

  it('cancels a task with tasks/cancel: the run is cancelled for every client, and a second cancel is refused', async () => {
    const client = await connect();
    const taskId = await startTask(client, 'think: 30');
    await taskIn(client, taskId, 'working');
    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    expect(cancelled.status).toBe('cancelled');
    expect(await runStatusOfTask(harness.base, taskId, aliceToken)).toBe('cancelled');
    const again = await errorOf(client.experimental.tasks.cancelTask(taskId));
    expect(again.code).toBe(ErrorCode.InvalidParams);
  });

  it('reads the same task after the API restarts between tasks/get calls: the run lives in Temporal', async () => {
    const client = await connect();
    const taskId = await startTask(client, 'think: 3');
    expect((await getTask(client, taskId)).status).toBe('working');
    await harness.api.stop();
    harness.api = await startTestApi(harness.client, harness.config);
    harness.base = harness.api.url;
    const afterRestart = await connect();
    await taskIn(afterRestart, taskId, 'completed');
    const result = await afterRestart.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect((result.content[0] as { text: string }).text).toContain('think: 3');
  });

  it('answers bad input with JSON-RPC error codes', async () => {
    const client = await connect();
    const unknownTool = await errorOf(client.callTool({ name: 'nobody', arguments: { message: 'hi' } }));
    expect(unknownTool.code).toBe(ErrorCode.InvalidParams);
    const noMessage = await errorOf(client.callTool({ name: 'agent', arguments: {} }));
    expect(noMessage.code).toBe(ErrorCode.InvalidParams);
    expect(noMessage.message).toContain('arguments.message');
    const badThread = await errorOf(
      client.callTool({ name: 'agent', arguments: { message: 'hi', thread_id: '../x' } }),
    );
    expect(badThread.code).toBe(ErrorCode.InvalidParams);
    const unknownTask = await errorOf(client.experimental.tasks.getTask('no-such-thread:no-such-run'));
    expect(unknownTask.code).toBe(ErrorCode.InvalidParams);
    const malformedTask = await errorOf(client.experimental.tasks.getTask('not a task id'));
    expect(malformedTask.code).toBe(ErrorCode.InvalidParams);
    const noMethod = await errorOf(client.request({ method: 'prompts/list' }, z.looseObject({})));
    expect(noMethod.code).toBe(ErrorCode.MethodNotFound);

    const notJson = await rawPost(harness.base, mcpHeaders, '{"jsonrpc": "2.0", "id": 1,');
    expect(notJson.status).toBe(400);
    expect(JSON.parse(notJson.text)).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } });
    const get = await fetch(`${harness.base}/mcp`, { headers: { authorization: `Bearer ${aliceToken}` } });
    expect(get.status).toBe(405);
  });

  it('holds the API doors at /mcp: a token, the Host check against rebinding, the Origin check against other pages', async () => {
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const { authorization: _, ...anonymous } = mcpHeaders;
    expect((await rawPost(harness.base, anonymous, list)).status).toBe(401);
    const rebound = await rawPost(harness.base, { ...mcpHeaders, host: 'evil.example:8080' }, list);
    expect(rebound.status).toBe(421);
    const elsewhere = await rawPost(harness.base, { ...mcpHeaders, origin: 'http://evil.example' }, list);
    expect(elsewhere.status).toBe(403);
    const plainText = await rawPost(
      harness.base,
      { ...mcpHeaders, 'content-type': 'text/plain', origin: 'http://evil.example' },
      list,
    );
    expect(plainText.status).toBe(403);
    const allowed = await rawPost(harness.base, mcpHeaders, list);
    expect(allowed.status).toBe(200);
    expect(messageOf(allowed.text)).toMatchObject({ result: { tools: expect.any(Array) as unknown } });
  });
  it("lists the caller's tasks with tasks/list (2025-11-25), newest first, and no one else's", async () => {
    const client = await connect();
    const first = await startTask(client, 'hello, first task');
    const second = await startTask(client, 'hello, second task');
    // Visibility lists a new thread a moment after it starts.
    const listed = await eventually(async () => {
      const { tasks } = await client.experimental.tasks.listTasks();
      const ids = tasks.map(({ taskId }) => taskId);
      return ids.includes(first) && ids.includes(second) ? ids : undefined;
    });
    expect(listed.indexOf(second)).toBeLessThan(listed.indexOf(first));
    const bobs = await (await connect(bobToken)).experimental.tasks.listTasks();
    expect(bobs.tasks.map(({ taskId }) => taskId)).not.toContain(first);
    const badCursor = await errorOf(client.experimental.tasks.listTasks('not-a-cursor'));
    expect(badCursor.code).toBe(ErrorCode.InvalidParams);
  });

  describe('with the SDK v2 client, revision 2026-07-28', () => {
    const v2Clients: ClientV2[] = [];
    afterAll(async () => {
      await Promise.all(v2Clients.map((client) => client.close().catch(() => undefined)));
    });
    const connectV2 = async (token = aliceToken): Promise<ClientV2> => {
      const client = new ClientV2(
        { name: 'keel-test-v2', version: '1.0.0' },
        { versionNegotiation: { mode: 'auto' } },
      );
      await client.connect(
        new StreamableHTTPClientTransportV2(new URL(`${harness.base}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${token}` } },
        }),
      );
      v2Clients.push(client);
      return client;
    };

    let nextId = 1;
    /**
     * A 2026-07-28 request of the Tasks extension, framed as the v2 client frames its own: the
     * SDK's client has no runtime for the extension's `resultType: "task"` (it answers
     * "Unsupported result type").
     */
    const extension = async (
      method: string,
      params: Record<string, unknown>,
      { token = aliceToken, declaresTasks = true } = {},
    ): Promise<{
      result?: Record<string, unknown>;
      error?: { code: number; message: string; data?: unknown };
    }> => {
      const answer = await postMcpExtension({
        base: harness.base,
        method,
        params,
        id: nextId++,
        clientName: 'keel-test-v2',
        headers: { authorization: `Bearer ${token}` },
        declaresTasks,
      });
      // The SDK answers some errors with an HTTP 400 too (-32021 among them), always as JSON-RPC.
      return messageOf(await answer.text()) as never;
    };
    const taskNow = async (taskId: string) => (await extension('tasks/get', { taskId })).result!;
    const extensionTaskIn = (taskId: string, status: string) =>
      eventually(
        async () => {
          const task = await taskNow(taskId);
          return task.status === status ? task : undefined;
        },
        30_000,
        `task ${taskId} ${status}`,
      );

    it('negotiates 2026-07-28 with server/discover, lists the tools and answers a blocking call', async () => {
      const client = await connectV2();
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      expect(client.getServerCapabilities()).toMatchObject({
        tools: {},
        extensions: { 'io.modelcontextprotocol/tasks': {} },
      });
      const { tools } = await client.listTools();
      expect(tools.find(({ name }) => name === 'agent')).toMatchObject({
        inputSchema: { type: 'object', required: ['message'] },
      });
      // Without the Tasks extension declared, the call waits for the answer.
      const result = await client.callTool({ name: 'agent', arguments: { message: 'hello over 2026' } });
      expect(result.isError).toBeFalsy();
      expect((result.content[0] as { text: string }).text).toContain('You said: “hello over 2026”');
      const bad = await rejectionOf(
        client.callTool({ name: 'nobody', arguments: { message: 'hi' } }),
        ProtocolError,
      );
      expect(bad.code).toBe(ErrorCode.InvalidParams);
    });

    it('answers a task to a client declaring the extension; a second client follows it through input_required, tasks/update and its inline result', async () => {
      const created = await extension('tools/call', {
        name: 'agent',
        arguments: { message: 'run: echo over-the-extension' },
      });
      expect(created.result).toMatchObject({ resultType: 'task', status: 'working', ttlMs: null });
      const taskId = created.result!.taskId as string;
      const waiting = await extensionTaskIn(taskId, 'input_required');
      const inputRequests = waiting.inputRequests as Record<string, { method: string }>;
      const [approvalId] = Object.keys(inputRequests);
      expect(inputRequests[approvalId!]).toMatchObject({ method: 'elicitation/create' });

      // The v1 client (2025-11-25) reads the same task: one run, every door.
      const v1 = await connect();
      expect((await getTask(v1, taskId)).status).toBe('input_required');
      // A client that did not declare the extension is told what it lacks; Bob finds nothing.
      const undeclared = await extension('tasks/get', { taskId }, { declaresTasks: false });
      expect(undeclared.error).toMatchObject({
        code: -32021,
        data: { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
      });
      const bobs = await extension('tasks/get', { taskId }, { token: bobToken });
      expect(bobs.error).toMatchObject({ code: ErrorCode.InvalidParams });
      // tasks/list and tasks/result are 2025-11-25's; the extension has neither.
      expect((await extension('tasks/list', {})).error).toMatchObject({ code: ErrorCode.MethodNotFound });

      const updated = await extension('tasks/update', {
        taskId,
        inputResponses: { [approvalId!]: { action: 'accept', content: { decision: 'approve' } } },
      });
      expect(updated).toMatchObject({ result: { resultType: 'complete' } });
      const done = await extensionTaskIn(taskId, 'completed');
      expect(done).toMatchObject({ resultType: 'complete', result: { content: [{ type: 'text' }] } });
      expect(JSON.stringify(done.result)).toContain('over-the-extension');
    });

    (hasPython ? it : it.skip)(
      `serves the Python MCP SDK's client (mcp ${pythonMcpVersion}): 2026-07-28, the tools, a blocking call`,
      async () => {
        const python = await ensurePythonMcp();
        const script = `
import asyncio, json, sys
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

async def main(url, token):
    http = httpx2.AsyncClient(headers={"authorization": "Bearer " + token}, timeout=60)
    async with Client(streamable_http_client(url, http_client=http)) as client:
        tools = await client.list_tools()
        result = await client.call_tool("agent", {"message": "hello from python"})
        print(json.dumps({
            "version": client.protocol_version,
            "tools": [tool.name for tool in tools.tools],
            "text": result.content[0].text,
            "is_error": bool(result.is_error),
        }))

asyncio.run(main(sys.argv[1], sys.argv[2]))
`;
        const { stdout } = await promisify(execFile)(
          python,
          ['-c', script, `${harness.base}/mcp`, aliceToken],
          {
            timeout: 60_000,
          },
        );
        const answer = JSON.parse(stdout) as {
          version: string;
          tools: string[];
          text: string;
          is_error: boolean;
        };
        expect(answer).toMatchObject({ version: '2026-07-28', is_error: false });
        expect(answer.tools).toContain('agent');
        expect(answer.text).toContain('You said: “hello from python”');
      },
    );

    it('cancels a task with tasks/cancel: acknowledged, then cancelled for every client', async () => {
      const created = await extension('tools/call', { name: 'agent', arguments: { message: 'think: 30' } });
      const taskId = created.result!.taskId as string;
      await extensionTaskIn(taskId, 'working');
      expect(await extension('tasks/cancel', { taskId })).toMatchObject({
        result: { resultType: 'complete' },
      });
      await extensionTaskIn(taskId, 'cancelled');
      expect(await runStatusOfTask(harness.base, taskId, aliceToken)).toBe('cancelled');
      expect((await extension('tasks/cancel', { taskId })).error).toMatchObject({
        code: ErrorCode.InvalidParams,
      });
    });
  });
});
