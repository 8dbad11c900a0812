/**
 * Keel's agents as an MCP server (decisions 0430, 0475): one `Server` of the official SDK (v2) per
 * HTTP request, over the same runs every other door makes, for both protocol eras the SDK serves.
 * A tool call runs one turn. Over 2026-07-28 a client that declares the Tasks extension
 * (`io.modelcontextprotocol/tasks`) gets a task (`resultType: "task"`) whose id is the run, read
 * by `tasks/get` (result inline), answered by `tasks/update` while an approval waits, stopped by
 * `tasks/cancel`; over 2025-11-25 the client asks for a task with `params.task` and reads its
 * result with `tasks/result`, and `tasks/list` lists its tasks. Nothing is kept in this process.
 */
import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import type { Logger } from 'pino';
import {
  CLIENT_CAPABILITIES_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
  Server,
  type JSONRPCRequest,
  type McpRequestContext,
  type Result,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { PendingApproval } from '../../common/approvals';
import { isTerminal, type Run } from '../../common/run';
import { fromTemporal } from '../errors';
import { startRun, waitForRunOrInterrupt, type RunServices } from '../runs/run-submission';
import { defaultAssistantId } from '../assistants/assistant-service';
import { protocolRunBody } from '../runs/run-schemas';
import { serverVersion } from '../system/system-routes';
import { waitForRun } from '../runs/run-waiter';
import type { ThreadRef } from '../threads/thread-ref';
import { ownerOf } from '../validate';
import {
  anyParams,
  callArguments,
  callParams,
  decisionOf,
  listParams,
  parseParams,
  shown,
  taskNotFound,
  taskParams,
  toProtocolError,
  updateParams,
} from './agent-params';
import { agentTools, toolDefinition, type AgentTool } from './agent-tools';
import {
  approvalLine,
  extensionTaskOf,
  runMetaKey,
  runOfTaskId,
  taskIdOf,
  taskOf,
  taskPageOf,
  taskStatusOf,
  threadMetaKey,
  toolResultOf,
} from './run-tasks';

/** The Tasks extension's identifier (2026-07-28), in capabilities on both sides. */
export const tasksExtension = 'io.modelcontextprotocol/tasks';

export interface AgentServerOptions {
  services: RunServices;
  /** The HTTP exchange the request came in: its owner (tokens) and headers. */
  response: Response;
  /** How long a call that is not a task waits for its answer, and `tasks/result` for its end. */
  waitMs: number;
  /** Aborts when the caller went away or the API stops: waits end, runs go on. */
  signal: AbortSignal;
  logger: Logger;
  /** The era the SDK serves this request in: 2026-07-28 (`modern`) or 2025-era (`legacy`). */
  era: McpRequestContext['era'];
}

/** JSON-RPC's request timeout, which `tasks/result` answers when the run has not ended. */
const requestTimeoutCode = -32001 as ProtocolErrorCode;

/** How long `tasks/cancel` waits for a stopping run to end before answering it as it is. */
const cancelWaitMs = 10_000;

/** A `tools/call` answered with a task, carried past the SDK's check of a tool result. */
class TaskAnswer {
  constructor(readonly result: Result) {}
}

/**
 * The SDK's `Server`, letting a `tools/call` answer a task. SDK v2 checks every `tools/call`
 * result against the era's `CallToolResult`, and has no runtime for tasks on either era: the
 * 2025-11-25 `{ task }` and the Tasks extension's `{ resultType: "task", ... }` both fail that
 * check. The request is still checked first and every other result still is (decision 0475).
 */
class AgentMcpServer extends Server {
  protected override _wrapHandler(
    method: string,
    handler: (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>,
  ): (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result> {
    if (method !== 'tools/call') return super._wrapHandler(method, handler);
    const checked = super._wrapHandler(method, async (request, ctx) => {
      const result = await handler(request, ctx);
      if (result.resultType === 'task' || 'task' in result) throw new TaskAnswer(result);
      return result;
    });
    return async (request, ctx) => {
      try {
        return await checked(request, ctx);
      } catch (caught) {
        if (caught instanceof TaskAnswer) return caught.result;
        throw caught;
      }
    };
  }
}

/** How many of the caller's threads `tasks/list` reads, most recently started first. */
const listedThreads = 50;

/** Whether the request declares the Tasks extension in its per-request capabilities (2026-07-28). */
function declaresTasks(ctx: ServerContext): boolean {
  // The SDK lifts the per-request envelope off `_meta` into `envelope`.
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as
    { extensions?: Record<string, unknown> } | undefined;
  return capabilities?.extensions?.[tasksExtension] !== undefined;
}

/** The extension's -32021 for a 2026-07-28 task method from a client that did not declare it. */
const missingTasksCapability = () =>
  new ProtocolError(ProtocolErrorCode.MissingRequiredClientCapability, 'Missing required client capability', {
    requiredCapabilities: { extensions: { [tasksExtension]: {} } },
  });

export function agentServer({ services, response, waitMs, signal, logger, era }: AgentServerOptions): Server {
  const { conversations, assistants, threadDirectory } = services;
  const owner = ownerOf(response);
  const modern = era === 'modern';
  const server = new AgentMcpServer(
    { name: 'keel', title: 'Keel', version: serverVersion },
    {
      capabilities: modern
        ? { tools: { listChanged: false }, extensions: { [tasksExtension]: {} } }
        : {
            tools: { listChanged: false },
            tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
            // The Tasks extension's answer to input_required, spoken over 2025-11-25: that revision's own
            // (the server's `elicitation/create` to the client) cannot be routed back by a stateless
            // server (decision 0430).
            experimental: { 'keel/tasks-update': {} },
          },
      instructions:
        'Each tool is a Keel agent: a call runs one durable turn. Call it as a task to poll it, answer its approvals with tasks/update, or cancel it.',
    },
  );
  const answering =
    <P, R>(work: (params: P, ctx: ServerContext) => Promise<R>) =>
    async (params: P, ctx: ServerContext): Promise<R> => {
      try {
        return await work(params, ctx);
      } catch (error) {
        throw toProtocolError(error, logger);
      }
    };
  /** A task method of the extension: over 2026-07-28 only for a client that declared it. */
  const taskMethod =
    <R>(work: (params: unknown, ctx: ServerContext) => Promise<R>) =>
    (params: unknown, ctx: ServerContext): Promise<R> => {
      if (modern && !declaresTasks(ctx)) return Promise.reject(missingTasksCapability());
      return answering(work)(params, ctx);
    };

  const tools = async (): Promise<AgentTool[]> => agentTools(await assistants.search({}, owner));

  /** The run a task names, visible to this caller; -32602 "not found" for any other. */
  const taskRun = async (taskId: string): Promise<{ thread: ThreadRef; run: Run }> => {
    const ref = runOfTaskId(taskId);
    if (ref === undefined) throw taskNotFound(taskId);
    try {
      const thread = await conversations.authorize(ref.thread_id, owner);
      return { thread, run: await conversations.getRun(thread, ref.run_id) };
    } catch (error) {
      // An id nobody holds is Temporal's "not found" before it is Keel's 404.
      if (fromTemporal(error)?.status === 404) throw taskNotFound(taskId);
      throw error;
    }
  };

  const pendingOf = async (thread: ThreadRef, run: Run): Promise<PendingApproval[]> =>
    taskStatusOf(run) === 'input_required'
      ? (await conversations.pendingApprovals(thread)).filter((approval) => approval.run_id === run.run_id)
      : [];

  /** A call's answer when the run has not ended: what it waits on, and where it goes on. */
  const unfinished = (run: Run, why: string) => ({
    content: [
      {
        type: 'text' as const,
        text: `${why} The run goes on: thread ${run.thread_id}, run ${run.run_id} (task ${taskIdOf(run)}).`,
      },
    ],
    isError: true,
    _meta: { [threadMetaKey]: run.thread_id, [runMetaKey]: run.run_id },
  });

  server.setRequestHandler('tools/list', async () => {
    try {
      return { tools: (await tools()).map(toolDefinition) };
    } catch (error) {
      throw toProtocolError(error, logger);
    }
  });

  server.setRequestHandler(
    'tools/call',
    { params: anyParams },
    answering(async (params, ctx) => {
      const call = parseParams(callParams, params, 'params');
      // The default assistant is always `agent` (its id): no visibility query to find it.
      const tool =
        call.name === defaultAssistantId
          ? { name: call.name, assistant: await assistants.get(defaultAssistantId, owner) }
          : (await tools()).find(({ name }) => name === call.name);
      if (tool === undefined)
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `unknown tool ${shown(call.name)}`);
      const { message, thread_id } = parseParams(callArguments, call.arguments, 'arguments');
      const body = protocolRunBody.parse({
        assistant_id: tool.assistant.assistant_id,
        input: { messages: [{ role: 'user', content: message }] },
        if_not_exists: 'create',
        metadata: { source: 'mcp' },
      });
      const threadId = thread_id ?? randomUUID();
      // 2026-07-28: the server decides; Keel answers a task to every client that can take one.
      if (modern && declaresTasks(ctx)) {
        const { run } = await startRun(services, threadId, body, response);
        return { resultType: 'task', ...extensionTaskOf(run) };
      }
      if (!modern && call.task !== undefined) {
        const { run } = await startRun(services, threadId, body, response);
        return { task: taskOf(run) };
      }
      const deadline = Date.now() + waitMs;
      const started = await startRun(services, threadId, body, response, { wait: true, deadline });
      const left = Math.max(0, deadline - Date.now());
      const settled = await waitForRunOrInterrupt(conversations, started.thread, started, left, signal);
      if (settled !== undefined && isTerminal(settled.status)) return toolResultOf(settled);
      if (settled !== undefined) {
        const pending = await pendingOf(started.thread, settled);
        return unfinished(
          settled,
          `The run waits for approval of ${pending.map(approvalLine).join('; ') || 'a tool call'}: decide it with POST /threads/${settled.thread_id}/approvals/<approval_id>, or call this tool as a task and answer it with tasks/update.`,
        );
      }
      const deferred = await conversations.deferRun(started.thread, started.run);
      if (isTerminal(deferred.status)) return toolResultOf(deferred);
      return unfinished(deferred, `No answer within ${Math.round(waitMs / 1000)} s.`);
    }),
  );

  server.setRequestHandler(
    'tasks/get',
    { params: anyParams },
    taskMethod(async (params) => {
      const { taskId } = parseParams(taskParams, params, 'params');
      const { thread, run } = await taskRun(taskId);
      const pending = await pendingOf(thread, run);
      return modern ? extensionTaskOf(run, pending) : taskOf(run, pending);
    }),
  );

  server.setRequestHandler(
    'tasks/cancel',
    { params: anyParams },
    taskMethod(async (params) => {
      const { taskId } = parseParams(taskParams, params, 'params');
      const { thread, run } = await taskRun(taskId);
      if (isTerminal(run.status))
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `cannot cancel task ${taskId}: it is ${taskStatusOf(run)}`,
        );
      const delivery = await conversations.cancelRun(thread, run.run_id, 'cancelled over MCP');
      // 2026-07-28 acknowledges; the task's status says when the run has stopped.
      if (modern) return {};
      if (delivery.kind !== 'taken') return taskOf(run);
      const ended = isTerminal(delivery.value.status)
        ? delivery.value
        : await waitForRun(conversations.client, thread, run.run_id, cancelWaitMs, signal);
      return taskOf(ended ?? delivery.value);
    }),
  );

  server.setRequestHandler(
    'tasks/update',
    { params: anyParams },
    taskMethod(async (params, ctx) => {
      // The SDK lifts `inputResponses` off every request's params (its multi round-trip seam).
      const lifted = ctx.mcpReq.inputResponses;
      const { taskId, inputResponses } = parseParams(
        updateParams,
        lifted === undefined ? params : { ...(params as object), inputResponses: lifted },
        'params',
      );
      const { thread, run } = await taskRun(taskId);
      const pending = await pendingOf(thread, run);
      // Every answer is checked before any is applied: a bad one changes nothing.
      const decisions = Object.entries(inputResponses).map(([key, answer]) => {
        const approval = pending.find(({ approval_id }) => approval_id === key);
        if (approval === undefined)
          throw new ProtocolError(
            ProtocolErrorCode.InvalidParams,
            `task ${taskId} has no outstanding input request ${shown(key)}`,
          );
        return decisionOf(approval, answer);
      });
      for (const decision of decisions) await conversations.decideApproval(thread, decision);
      return {};
    }),
  );

  // 2025-11-25 only: the 2026-07-28 Tasks extension has neither (the SDK answers -32601 there).
  if (!modern) {
    server.setRequestHandler(
      'tasks/result',
      { params: anyParams },
      answering(async (params) => {
        const { taskId } = parseParams(taskParams, params, 'params');
        const { thread, run } = await taskRun(taskId);
        const ended = isTerminal(run.status)
          ? run
          : await waitForRun(conversations.client, thread, run.run_id, waitMs, signal);
        if (ended === undefined)
          throw new ProtocolError(
            requestTimeoutCode,
            `task ${taskId} has not ended within ${Math.round(waitMs / 1000)} s; poll it with tasks/get`,
          );
        const result = toolResultOf(ended);
        return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
      }),
    );

    server.setRequestHandler(
      'tasks/list',
      { params: anyParams },
      answering(async (params) => {
        const { cursor } = parseParams(listParams, params, 'params');
        // The caller's runs made over MCP, in her most recently started threads.
        const threads = await threadDirectory.search({}, owner, listedThreads);
        const runs = await Promise.all(threads.map(({ thread }) => conversations.listRuns(thread, 100)));
        const page = taskPageOf(runs.flat(), cursor);
        if (page === undefined)
          throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'params.cursor: not a cursor Keel gave');
        return page;
      }),
    );
  }

  return server;
}
