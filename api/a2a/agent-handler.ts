/**
 * One assistant over A2A 1.0 (decision 0445), for one HTTP request: the SDK's JSON-RPC transport
 * parses, checks and serializes; this answers each method over the same runs every other door
 * makes. A message is a turn on the thread its `contextId` names (a new one without it), and the
 * task is that run; a message on a task that waits for approval answers the approval. Nothing is
 * kept in this process: any API process answers any request.
 */
import { randomUUID } from 'node:crypto';
import type {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import { Role, StreamResponse as StreamResponses, TaskState } from '@a2a-js/sdk';
import { TaskNotCancelableError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import type { Response } from 'express';
import type { Logger } from 'pino';
import type { Assistant } from '../../common/assistants';
import type { PendingApproval } from '../../common/approvals';
import { idPattern, limits } from '../../common/limits';
import { fromTemporal } from '../errors';
import { isTerminal, type Run } from '../../common/run';
import { runOfTaskId, taskStatusOf } from '../mcp/run-tasks';
import { startRun, waitForRunOrInterrupt, type RunServices } from '../runs/run-submission';
import { waitForRun } from '../runs/run-waiter';
import type { ThreadRef } from '../threads/thread-ref';
import { ownerOf } from '../validate';
import { agentCardOf, type AgentCardOptions } from './agent-card';
import { decisionsOf } from './decisions';
import { invalidParams, shown, taskNotFound, toA2AError } from './errors';
import { configOf, pushConfigOf } from './push-configs';
import type { LiveTextSource } from '../streams/live-merge';
import { newTurnOf } from './new-turn';
import { runEvents } from './run-events';
import {
  answerUpdateOf,
  progressUpdateOf,
  statusUpdateOf,
  taskJsonOf,
  taskOf,
  textUpdateOf,
  viewOfEvent,
} from './task-views';

export interface AgentHandlerOptions {
  services: RunServices;
  assistant: Assistant;
  card: AgentCardOptions;
  /** The HTTP exchange: its owner (tokens) and headers. */
  response: Response;
  /** How long a blocking `SendMessage` waits for the task to end or ask for input. */
  waitMs: number;
  /** Aborts when the caller went away or the API stops: waits and streams end, runs go on. */
  signal: AbortSignal;
  logger: Logger;
  /** Where streams read the model's text as it is written (decision 0340); without it, whole. */
  live?: LiveTextSource | undefined;
}

/** How many of the caller's threads `ListTasks` without a `contextId` reads, most recently started first. */
const listedThreads = 50;
/** How many runs of each thread `ListTasks` reads: of the one context named, or of each of hers. */
const runsOfContext = 1_000;
const runsPerThread = 100;

/** How long `CancelTask` waits for a stopping run to end before answering it as it is. */
const cancelWaitMs = 10_000;

export class AgentHandler implements A2ARequestHandler {
  readonly #options: AgentHandlerOptions;
  readonly #owner: string | undefined;

  constructor(options: AgentHandlerOptions) {
    this.#options = options;
    this.#owner = ownerOf(options.response);
  }

  getAgentCard(): Promise<AgentCard> {
    return Promise.resolve(agentCardOf(this.#options.assistant, this.#options.card));
  }

  getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    return Promise.reject(new UnsupportedOperationError('Keel has no extended agent card'));
  }

  async sendMessage(params: SendMessageRequest): Promise<Message | Task> {
    return this.#answering(async () => {
      const { waitMs, signal } = this.#options;
      const conversations = this.#options.services.conversations;
      const started = await this.#take(params, params.configuration?.returnImmediately !== true);
      if (params.configuration?.returnImmediately === true) return taskOf(started.run, started.pending);
      const deadline = Date.now() + waitMs;
      const settled = await waitForRunOrInterrupt(
        conversations,
        started.thread,
        started.submitted,
        waitMs,
        signal,
      );
      if (settled !== undefined) return taskOf(settled, await this.#pendingOf(started.thread, settled));
      if (Date.now() < deadline) return taskOf(started.run);
      // No answer in time: the task goes on, and says it is still working.
      return taskOf(await conversations.deferRun(started.thread, started.run));
    });
  }

  async *sendMessageStream(params: SendMessageRequest): AsyncGenerator<StreamResponse, void, undefined> {
    const started = await this.#answering(() => this.#take(params, false));
    yield StreamResponses.fromJSON({ task: taskJsonOf(started.run, started.pending) });
    yield* this.#follow(started.thread, started.run, started.fromOffset);
  }

  async getTask(params: GetTaskRequest): Promise<Task> {
    return this.#answering(async () => {
      const { thread, run } = await this.#taskRun(params.id);
      return taskOf(run, await this.#pendingOf(thread, run));
    });
  }

  /**
   * The tasks of one context (the thread `contextId` names), or without one the caller's tasks
   * across her most recently started threads (at most {@link listedThreads}, as MCP's
   * `tasks/list` reads): this assistant's runs, most recently updated first, paged by an offset.
   */
  async listTasks(params: ListTasksRequest): Promise<ListTasksResponse> {
    return this.#answering(async () => {
      const { conversations, threadDirectory } = this.#options.services;
      const pageSize = params.pageSize ?? 50;
      if (pageSize < 1 || pageSize > 100) throw invalidParams('pageSize must be 1 to 100');
      const offset = params.pageToken === '' ? 0 : Number(params.pageToken);
      if (!Number.isSafeInteger(offset) || offset < 0) throw invalidParams('pageToken is not one Keel gave');
      const threads =
        params.contextId === ''
          ? (await threadDirectory.search({}, this.#owner, listedThreads)).map(({ thread }) => thread)
          : [await this.#thread(params.contextId)];
      const perRun = params.contextId === '' ? runsPerThread : runsOfContext;
      const perThread = await Promise.all(
        threads.map(async (thread) => {
          const runs = (await conversations.listRuns(thread, perRun)).filter(
            (run) =>
              run.assistant_id === this.#options.assistant.assistant_id &&
              (params.statusTimestampAfter === undefined || run.updated_at >= params.statusTimestampAfter),
          );
          const pending = runs.some((run) => taskStatusOf(run) === 'input_required')
            ? await conversations.pendingApprovals(thread)
            : [];
          return runs.map((run) => ({ run, task: taskOf(run, pending) }));
        }),
      );
      const tasks = perThread
        .flat()
        .filter(
          ({ task }) =>
            params.status === TaskState.TASK_STATE_UNSPECIFIED || task.status?.state === params.status,
        )
        .sort(
          (a, b) => b.run.updated_at.localeCompare(a.run.updated_at) || b.task.id.localeCompare(a.task.id),
        )
        .map(({ task }) => task);
      const page = tasks.slice(offset, offset + pageSize);
      return {
        tasks: page,
        nextPageToken: offset + pageSize < tasks.length ? String(offset + pageSize) : '',
        pageSize,
        totalSize: tasks.length,
      };
    });
  }

  async cancelTask(params: CancelTaskRequest): Promise<Task> {
    return this.#answering(async () => {
      const { conversations } = this.#options.services;
      const { thread, run } = await this.#taskRun(params.id);
      if (isTerminal(run.status))
        throw new TaskNotCancelableError(`task ${shown(params.id)} has ended (${run.status})`);
      const delivery = await conversations.cancelRun(thread, run.run_id, 'cancelled over A2A');
      if (delivery.kind !== 'taken') return taskOf(run);
      const ended = isTerminal(delivery.value.status)
        ? delivery.value
        : await waitForRun(conversations.client, thread, run.run_id, cancelWaitMs, this.#options.signal);
      return taskOf(ended ?? delivery.value);
    });
  }

  async *resubscribe(params: SubscribeToTaskRequest): AsyncGenerator<StreamResponse, void, undefined> {
    const { conversations } = this.#options.services;
    const { thread, run } = await this.#answering(() => this.#taskRun(params.id));
    if (isTerminal(run.status))
      throw new UnsupportedOperationError(
        `task ${shown(params.id)} has ended (${run.status}): read it with GetTask`,
      );
    const pending = await this.#answering(() => this.#pendingOf(thread, run));
    yield StreamResponses.fromJSON({ task: taskJsonOf(run, pending) });
    // From the run's first event: the stream replays what the log holds, then follows it live.
    const base = await this.#answering(() => conversations.streamBase(thread));
    yield* this.#follow(thread, run, Math.max(run.first_event_offset ?? base, base));
  }

  /**
   * Push notification configs (decision 0485), kept on the thread's workflow beside the run: any
   * API process answers for them, and when the run ends the workflow POSTs the task to each through
   * Keel's signed, retried webhooks. A URL is checked as a webhook's is (-32602 when refused).
   */
  async createTaskPushNotificationConfig(
    params: TaskPushNotificationConfig,
  ): Promise<TaskPushNotificationConfig> {
    return this.#answering(async () => {
      const { conversations } = this.#options.services;
      const { thread, run } = await this.#taskRun(params.taskId);
      if (isTerminal(run.status))
        throw new UnsupportedOperationError(
          `task ${shown(params.taskId)} has ended (${run.status}): read it with GetTask`,
        );
      const config = pushConfigOf(params, randomUUID);
      await conversations.checkWebhook(config.url);
      return configOf(params.taskId, await conversations.setPushConfig(thread, run.run_id, config));
    });
  }

  async getTaskPushNotificationConfig(
    params: GetTaskPushNotificationConfigRequest,
  ): Promise<TaskPushNotificationConfig> {
    return this.#answering(async () => {
      const { thread, run } = await this.#taskRun(params.taskId);
      const configs = await this.#options.services.conversations.pushConfigs(thread, run.run_id);
      const config = configs.find(({ id }) => id === params.id);
      // As the SDK's own handler answers an unknown config: not found (-32001).
      if (config === undefined)
        throw new TaskNotFoundError(
          `no push notification config ${shown(params.id)} on task ${shown(params.taskId)}`,
        );
      return configOf(params.taskId, config);
    });
  }

  async listTaskPushNotificationConfigs(
    params: ListTaskPushNotificationConfigsRequest,
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    return this.#answering(async () => {
      const { thread, run } = await this.#taskRun(params.taskId);
      const configs = await this.#options.services.conversations.pushConfigs(thread, run.run_id);
      // At most `maxPushConfigsPerRun` (10): one page.
      return { configs: configs.map((config) => configOf(params.taskId, config)), nextPageToken: '' };
    });
  }

  /** Idempotent, as the SDK's own handler is: deleting a config the task does not have does nothing. */
  async deleteTaskPushNotificationConfig(params: DeleteTaskPushNotificationConfigRequest): Promise<void> {
    return this.#answering(async () => {
      const { conversations } = this.#options.services;
      const { thread, run } = await this.#taskRun(params.taskId);
      const configs = await conversations.pushConfigs(thread, run.run_id);
      if (configs.some(({ id }) => id === params.id))
        await conversations.deletePushConfig(thread, run.run_id, params.id);
    });
  }

  async #answering<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw toA2AError(error, this.#options.logger);
    }
  }

  /** The thread a context id names, visible to this caller. */
  async #thread(contextId: string): Promise<ThreadRef> {
    if (contextId.length > limits.maxIdChars || !idPattern.test(contextId))
      throw invalidParams(`contextId ${shown(contextId)} is not a thread id`);
    return this.#options.services.conversations.authorize(contextId, this.#owner);
  }

  /** The run a task id names, visible to this caller; TaskNotFound for any other. */
  async #taskRun(taskId: string): Promise<{ thread: ThreadRef; run: Run }> {
    const { conversations } = this.#options.services;
    const ref = runOfTaskId(taskId);
    if (ref === undefined) throw taskNotFound(taskId);
    try {
      const thread = await conversations.authorize(ref.thread_id, this.#owner);
      const run = await conversations.getRun(thread, ref.run_id);
      if (run.assistant_id !== this.#options.assistant.assistant_id) throw taskNotFound(taskId);
      return { thread, run };
    } catch (error) {
      if (fromTemporal(error)?.status === 404) throw taskNotFound(taskId);
      throw error;
    }
  }

  async #pendingOf(thread: ThreadRef, run: Run): Promise<PendingApproval[]> {
    if (taskStatusOf(run) !== 'input_required') return [];
    const pending = await this.#options.services.conversations.pendingApprovals(thread);
    return pending.filter((approval) => approval.run_id === run.run_id);
  }

  /**
   * Takes a message: on a task, the answer to its pending approvals; else a new turn on the
   * context's thread (created when absent) or on a new thread.
   */
  async #take(params: SendMessageRequest, blocking: boolean) {
    const { services, assistant, response, waitMs } = this.#options;
    const { conversations } = services;
    const message = params.message;
    if (message === undefined || message.parts.length === 0)
      throw invalidParams('message: a message with at least one part');
    if (message.role !== Role.ROLE_USER) throw invalidParams('message.role: ROLE_USER');
    if (message.taskId !== '') {
      const { thread, run } = await this.#taskRun(message.taskId);
      if (message.contextId !== '' && message.contextId !== run.thread_id)
        throw invalidParams('message.contextId is not the task’s context');
      if (isTerminal(run.status))
        throw new UnsupportedOperationError(
          `task ${shown(message.taskId)} has ended (${run.status}); send a new message`,
        );
      const pending = await this.#pendingOf(thread, run);
      if (pending.length === 0)
        throw new UnsupportedOperationError(
          `task ${shown(message.taskId)} is working and asks for no input; send a new message without taskId for a new turn`,
        );
      const decisions = decisionsOf(message, pending);
      const fromOffset = await conversations.currentOffset(thread);
      for (const decision of decisions) await conversations.decideApproval(thread, decision);
      const current = await conversations.getRun(thread, run.run_id);
      // Not settled: the wait that follows watches for the run's end or its next approval.
      const { status_reason: _reason, ...going } = current;
      return {
        thread,
        run: current,
        pending: await this.#pendingOf(thread, current),
        submitted: { run: going as Run },
        fromOffset,
      };
    }
    const { threadId, body } = newTurnOf(message, assistant.assistant_id);
    const started = await startRun(services, threadId, body, response, {
      wait: blocking,
      deadline: Date.now() + waitMs,
    });
    return {
      thread: started.thread,
      run: started.run,
      pending: [] as PendingApproval[],
      submitted: started,
      fromOffset: started.run.first_event_offset ?? ('base' as const),
    };
  }

  /**
   * The run's events as A2A stream responses, until it ends, or until it waits for an approval
   * that is still pending (an interrupted state ends the stream; a follow-up message goes on).
   */
  async *#follow(thread: ThreadRef, run: Run, fromOffset: number | 'base'): AsyncGenerator<StreamResponse> {
    const { conversations } = this.#options.services;
    let current = run;
    /** The model call whose text the answer artifact holds now. */
    let writing: string | undefined;
    for await (const event of runEvents({
      client: conversations.client,
      thread,
      runId: run.run_id,
      fromOffset,
      signal: this.#options.signal,
      live: this.#options.live,
    })) {
      const view = viewOfEvent(event);
      if (view.kind === 'progress') yield progressUpdateOf(current, view.text);
      if (view.kind === 'text' && view.text !== '') {
        yield textUpdateOf(current, view.text, view.call === writing);
        writing = view.call;
      }
      if (view.kind === 'status') {
        current = view.run;
        if (current.status === 'completed') yield answerUpdateOf(current);
        yield statusUpdateOf(current);
        if (isTerminal(current.status)) return;
      }
      if (view.kind === 'approval') {
        const latest = await this.#answering(() => conversations.getRun(thread, run.run_id));
        const pending = await this.#answering(() => this.#pendingOf(thread, latest));
        if (pending.some(({ approval_id }) => approval_id === view.approvalId)) {
          yield statusUpdateOf(latest, pending);
          return;
        }
      }
    }
  }
}
