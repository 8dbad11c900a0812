/**
 * Keel's agents as an MCP server (decision 0430): one `Server` of the official SDK per HTTP
 * request, over the same runs every other door makes. A tool call runs one turn; as a task it
 * answers at once with a task that is the run, read by `tasks/get`, answered by `tasks/update`
 * while an approval waits, stopped by `tasks/cancel`. Nothing is kept in this process.
 */
import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import type { Logger } from 'pino';
import { z } from 'zod';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  McpError,
  RELATED_TASK_META_KEY,
  type ServerResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { DecideApprovalInput, PendingApproval } from '../../common/approvals';
import { idPattern, limits } from '../../common/limits';
import { isTerminal, type Run } from '../../common/run';
import { fromTemporal } from '../errors';
import { startRun, waitForRunOrInterrupt, type RunServices } from '../protocol/run-submission';
import { defaultAssistantId } from '../protocol/assistants';
import { protocolRunBody } from '../protocol/run-schemas';
import { serverVersion } from '../routes/system';
import { waitForRun } from '../run-waiter';
import type { ThreadRef } from '../thread-ref';
import { ownerOf } from '../validate';
import { agentTools, toolDefinition, type AgentTool } from './agent-tools';
import {
  approvalLine,
  runMetaKey,
  runOfTaskId,
  taskIdOf,
  taskOf,
  taskStatusOf,
  threadMetaKey,
  toolResultOf,
} from './run-tasks';

export interface AgentServerOptions {
  services: RunServices;
  /** The HTTP exchange the request came in: its owner (tokens) and headers. */
  response: Response;
  /** How long a call that is not a task waits for its answer, and `tasks/result` for its end. */
  waitMs: number;
  /** Aborts when the caller went away or the API stops: waits end, runs go on. */
  signal: AbortSignal;
  logger: Logger;
}

/** How long `tasks/cancel` waits for a stopping run to end before answering it as it is. */
const cancelWaitMs = 10_000;

/** A request of `method`; its params are checked by the handler, so bad ones answer -32602. */
const request = <M extends string>(method: M) =>
  z.looseObject({ method: z.literal(method), params: z.unknown().optional() });

const callArguments = z.strictObject({
  message: z.string().min(1).max(limits.maxInputChars),
  thread_id: z.string().max(limits.maxIdChars).regex(idPattern, 'not a thread id').optional(),
});
const callParams = z.looseObject({
  name: z.string(),
  arguments: z.record(z.string(), z.unknown()).optional(),
  task: z.looseObject({ ttl: z.number().optional() }).optional(),
});
const taskParams = z.looseObject({ taskId: z.string().max(500) });
const inputResponse = z.looseObject({
  action: z.enum(['accept', 'decline', 'cancel']),
  content: z.record(z.string(), z.unknown()).optional(),
});
const updateParams = taskParams.extend({
  inputResponses: z.record(z.string(), inputResponse),
});

function parseParams<S extends z.ZodType>(schema: S, params: unknown, what: string): z.infer<S> {
  const parsed = schema.safeParse(params ?? {});
  if (parsed.success) return parsed.data;
  const message = parsed.error.issues
    .map((issue) => `${[what, ...issue.path].join('.')}: ${issue.message}`)
    .join('; ');
  throw new McpError(ErrorCode.InvalidParams, message);
}

const shown = (text: string): string => (text.length > 100 ? `${text.slice(0, 100)}…` : text);
const taskNotFound = (taskId: string) =>
  new McpError(ErrorCode.InvalidParams, `task ${shown(taskId)} not found`);

/**
 * Keel's errors in JSON-RPC's codes: what the caller sent wrong (unknown, conflicting, invalid)
 * is -32602, Temporal out of reach or anything else -32603 (with `data.code` saying which).
 */
function toMcpError(error: unknown, logger: Logger): McpError {
  if (error instanceof McpError) return error;
  const api = fromTemporal(error);
  if (api !== undefined && api.status < 500)
    return new McpError(ErrorCode.InvalidParams, api.message, { status: api.status, code: api.code });
  if (api !== undefined)
    return new McpError(ErrorCode.InternalError, api.message, { status: api.status, code: api.code });
  logger.error({ err: error }, 'MCP request failed');
  return new McpError(ErrorCode.InternalError, 'internal error');
}

/** A decision for `approval` from an elicitation-shaped answer (action, and a form's content). */
function decisionOf(approval: PendingApproval, answer: z.infer<typeof inputResponse>): DecideApprovalInput {
  const content = answer.content ?? {};
  const reason = typeof content.reason === 'string' && content.reason !== '' ? content.reason : undefined;
  const decision = answer.action === 'accept' ? (content.decision ?? 'approve') : 'deny';
  const id = approval.approval_id;
  if (decision === 'deny')
    return { approval_id: id, decision: 'deny', reason: reason ?? `${answer.action}ed over MCP` };
  if (decision === 'approve') return { approval_id: id, decision: 'approve' };
  if (decision !== 'edit')
    throw new McpError(
      ErrorCode.InvalidParams,
      `inputResponses.${id}.content.decision: must be approve, edit or deny`,
    );
  let input: unknown = content.input;
  try {
    if (typeof input === 'string') input = JSON.parse(input);
  } catch {
    input = undefined;
  }
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw new McpError(
      ErrorCode.InvalidParams,
      `inputResponses.${id}.content.input: with edit, the tool's arguments as a JSON object`,
    );
  return { approval_id: id, decision: 'approve', input: input as Record<string, unknown> };
}

export function agentServer({ services, response, waitMs, signal, logger }: AgentServerOptions): Server {
  const { conversations, assistants } = services;
  const owner = ownerOf(response);
  const server = new Server(
    { name: 'keel', title: 'Keel', version: serverVersion },
    {
      capabilities: {
        tools: { listChanged: false },
        tasks: { cancel: {}, requests: { tools: { call: {} } } },
        // The Tasks extension's answer to input_required, spoken over 2025-11-25 (decision 0430).
        experimental: { 'keel/tasks-update': {} },
      },
      instructions:
        'Each tool is a Keel agent: a call runs one durable turn. Call it as a task to poll it, answer its approvals with tasks/update, or cancel it.',
    },
  );
  const answering =
    <P, R>(work: (params: P) => Promise<R>) =>
    async (params: P): Promise<ServerResult> => {
      try {
        return (await work(params)) as ServerResult;
      } catch (error) {
        throw toMcpError(error, logger);
      }
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

  server.setRequestHandler(
    request('tools/list'),
    answering(async () => ({ tools: (await tools()).map(toolDefinition) })),
  );

  server.setRequestHandler(
    request('tools/call'),
    answering(async ({ params }) => {
      const call = parseParams(callParams, params, 'params');
      // The default assistant is always `agent` (its id): no visibility query to find it.
      const tool =
        call.name === defaultAssistantId
          ? { name: call.name, assistant: await assistants.get(defaultAssistantId, owner) }
          : (await tools()).find(({ name }) => name === call.name);
      if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${shown(call.name)}`);
      const { message, thread_id } = parseParams(callArguments, call.arguments, 'arguments');
      const body = protocolRunBody.parse({
        assistant_id: tool.assistant.assistant_id,
        input: { messages: [{ role: 'user', content: message }] },
        if_not_exists: 'create',
        metadata: { source: 'mcp' },
      });
      const threadId = thread_id ?? randomUUID();
      if (call.task !== undefined) {
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
    request('tasks/get'),
    answering(async ({ params }) => {
      const { taskId } = parseParams(taskParams, params, 'params');
      const { thread, run } = await taskRun(taskId);
      return taskOf(run, await pendingOf(thread, run));
    }),
  );

  server.setRequestHandler(
    request('tasks/result'),
    answering(async ({ params }) => {
      const { taskId } = parseParams(taskParams, params, 'params');
      const { thread, run } = await taskRun(taskId);
      const ended = isTerminal(run.status)
        ? run
        : await waitForRun(conversations.client, thread, run.run_id, waitMs, signal);
      if (ended === undefined)
        throw new McpError(
          ErrorCode.RequestTimeout,
          `task ${taskId} has not ended within ${Math.round(waitMs / 1000)} s; poll it with tasks/get`,
        );
      const result = toolResultOf(ended);
      return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
    }),
  );

  server.setRequestHandler(
    request('tasks/cancel'),
    answering(async ({ params }) => {
      const { taskId } = parseParams(taskParams, params, 'params');
      const { thread, run } = await taskRun(taskId);
      if (isTerminal(run.status))
        throw new McpError(
          ErrorCode.InvalidParams,
          `cannot cancel task ${taskId}: it is ${taskStatusOf(run)}`,
        );
      const delivery = await conversations.cancelRun(thread, run.run_id, 'cancelled over MCP');
      if (delivery.kind !== 'taken') return taskOf(run);
      const ended = isTerminal(delivery.value.status)
        ? delivery.value
        : await waitForRun(conversations.client, thread, run.run_id, cancelWaitMs, signal);
      return taskOf(ended ?? delivery.value);
    }),
  );

  server.setRequestHandler(
    request('tasks/update'),
    answering(async ({ params }) => {
      const { taskId, inputResponses } = parseParams(updateParams, params, 'params');
      const { thread, run } = await taskRun(taskId);
      const pending = await pendingOf(thread, run);
      // Every answer is checked before any is applied: a bad one changes nothing.
      const decisions = Object.entries(inputResponses).map(([key, answer]) => {
        const approval = pending.find(({ approval_id }) => approval_id === key);
        if (approval === undefined)
          throw new McpError(
            ErrorCode.InvalidParams,
            `task ${taskId} has no outstanding input request ${shown(key)}`,
          );
        return decisionOf(approval, answer);
      });
      for (const decision of decisions) await conversations.decideApproval(thread, decision);
      return { resultType: 'complete' };
    }),
  );

  return server;
}
