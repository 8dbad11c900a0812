/**
 * The API's side of the conversation workflows: each thread is one (`conversation-<thread_id>`),
 * runs are `submitInput` updates, reads are queries. Routes reach a thread's workflow through
 * this; finding threads across the namespace is the thread directory's (thread-directory.ts).
 */
import { LRUCache } from 'lru-cache';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Client,
  QueryNotRegisteredError,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowUpdateFailedError,
  type WorkflowUpdateHandle,
  WorkflowUpdateStage,
} from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import type { PushConfig } from '../common/a2a-push';
import type { DecideApprovalInput, PendingApproval } from '../common/approvals';
import type { KeelConfig } from '../platform/config';
import * as messages from '../common/messages';
import { isTerminal, MultitaskStrategy, queuedRun, type Run } from '../common/run';
import { formatHostEntry, notCoveredBy, parseHostEntry, type HostEntry } from '../platform/network-hosts';
import { searchAttributes } from '../common/search-attributes';
import { ThreadStatus, type Thread, type ThreadConfig } from '../common/thread';

import { textOf, type Message } from '../common/transcript';
import { zeroUsage } from '../common/usage';
import type { NewConversation, conversationWorkflow } from '../workflows/interpreter/workflow';
import type { Carried, CarriedPart } from '../workflows/interpreter/carried';
import { summarizeThread } from '../common/summaries';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { checkOutboundUrl, RefusedUrl, UnresolvedHost } from '../platform/outbound-address';
import { ApiError, threadExists, threadNotFound } from './errors';
import { withCallSignal } from './gateway/call-signal';
import type { AskToBeat } from './streams/live-beat';
import { deliver, FleetActivity, isStall, type Delivery } from './gateway/intake';
import type { ThreadConfigInput } from './schemas';
import { threadRef, unscopedRef, type ThreadRef } from './threads/thread-ref';
import { TranscriptReader } from './gateway/transcript-reader';
import { LangChainJson } from './protocol/langchain-json';

export interface ReadOptions {
  /**
   * Until when (ms since the epoch) the thread's answer is awaited when its worker is slow or
   * away, instead of the read timeout: for a caller that waits anyway, as a `runs/wait` whose run
   * is over does for its values. A worker too busy to answer within the read timeout (a loaded
   * machine) is no reason to fail a run that completed. Never shorter than the read timeout.
   */
  until?: number;
}

/** Between asks of a thread whose task a worker holds (see `read`). */
const heldQueryPauseMs = 100;
/** The last ask after a held task ended has at least this long. */
const heldQueryLastMs = 500;

/** How many threads `#running` remembers. */
const runningKept = 10_000;

const authorizedKey = (thread: ThreadRef, owner: Owner): string =>
  `${owner ?? ''}\u0000${thread.workflow_id}`;

/** How long a deferral is still tried after its caller was answered (a cosmetic mark). */
const deferralWithinMs = 15_000;

/** A protobuf timestamp or duration in milliseconds. */
function protoMs(
  value: { seconds?: number | { toNumber(): number } | null; nanos?: number | null } | null | undefined,
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const seconds = value.seconds ?? 0;
  return (typeof seconds === 'number' ? seconds : seconds.toNumber()) * 1000 + (value.nanos ?? 0) / 1e6;
}

/** A submitted run, and (for a caller that waits) the thread's answer at the run's end. */
export interface Submitted {
  run: Run;
  /** Present when the thread itself took a waiting submission; see `submitRun`. */
  settled?: (signal: AbortSignal) => Promise<Run>;
}

/** A conversation workflow in this state is a deleted thread (only DELETE terminates one). */
export const deletedStatus = 'TERMINATED';

/** What the Web UI shows under a thread's workflow: who owns it and how it was configured. */
function threadDetails(conversation: NewConversation): string {
  return [
    `Keel thread \`${conversation.thread_id}\``,
    `- owner: ${conversation.owner ?? 'local'}`,
    `- model: \`${conversation.config.model}\``,
    `- created: ${conversation.created_at}`,
    '- metadata: in the memo; live status, approvals and spend: current details',
  ].join('\n');
}

/** The caller, as authentication established it; undefined when the API runs without tokens. */
export type Owner = string | undefined;

type Description = Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['describe']>>;

/** 404 unless the described thread is there (not deleted) and, with tokens, `owner`'s. */
function requireVisible(thread: ThreadRef, description: Description, owner: Owner): void {
  if (description.status.name === deletedStatus) throw threadNotFound(thread.thread_id);
  if (owner !== undefined && description.typedSearchAttributes.get(searchAttributes.owner) !== owner)
    throw threadNotFound(thread.thread_id);
}

/**
 * The hosts asked for, each within the operator's `KEEL_SANDBOX_NETWORK_HOSTS`, in canonical
 * form (what the worker's proxy compares); else 422 saying which and why.
 */
export function grantNetworkHosts(asked: readonly string[], granted: readonly HostEntry[]): string[] {
  return asked.map((raw) => {
    const entry = parseHostEntry(raw);
    const why =
      typeof entry === 'string'
        ? entry
        : granted.length === 0
          ? 'KEEL_SANDBOX_NETWORK_HOSTS is empty'
          : notCoveredBy(granted, entry);
    if (typeof entry === 'string' || why !== undefined)
      throw new ApiError(
        422,
        'network_host_not_allowed',
        `network host "${raw}" is not one the operator allows threads to reach (${why})`,
        'config.network_hosts',
      );
    return formatHostEntry(entry);
  });
}

export class Conversations {
  readonly #transcripts = new TranscriptReader();
  readonly #langChainJson = new LangChainJson();
  /** What came with a waited run's answer, by the very run object `settled` resolved with. */
  readonly #carried = new WeakMap<Run, messages.WaitedValues>();
  /** Whether threads are accepting waiting inputs right now (intake.ts). */
  readonly #fleet = new FleetActivity();
  /** Threads' workflows that accepted a waiting input through this API, most recent last. */
  readonly #running = new LRUCache<string, true>({ max: runningKept });
  /** Owner and workflow of the threads `authorize` found visible to that owner (see `knownThread`). */
  readonly #authorized = new LRUCache<string, true>({ max: runningKept });

  constructor(
    readonly client: Client,
    private readonly config: Pick<
      KeelConfig,
      'taskQueue' | 'model' | 'defaults' | 'webhookAllowHosts' | 'sandbox'
    > & {
      api: Pick<KeelConfig['api'], 'intakeWaitMs' | 'readTimeoutMs' | 'localModelCalls' | 'waitValuesChars'>;
    },
    /**
     * Asks the worker running a thread's model call to beat at once, after a Stop or an
     * interrupting input, so the cancel reaches the call at once, not at its next slow beat
     * (decision 0420). @default none: the call's own beat carries the cancel
     */
    private readonly askToBeat?: AskToBeat,
  ) {}

  /**
   * Refuses (422) a webhook URL that leads to loopback, private, link-local or metadata addresses.
   * A name that does not resolve now is taken: delivery checks it again when it connects.
   */
  async checkWebhook(url: string): Promise<void> {
    try {
      await checkOutboundUrl(url, this.config.webhookAllowHosts);
    } catch (error) {
      if (error instanceof UnresolvedHost) return;
      if (!(error instanceof RefusedUrl)) throw error;
      throw new ApiError(
        422,
        'webhook_refused',
        `webhook ${error.message}; an operator can allow the host with KEEL_WEBHOOK_ALLOW_HOSTS`,
        'webhook',
      );
    }
  }

  /**
   * A read of the thread's live state (a query), bounded: a query needs a worker, and with none
   * (a deploy, an outage) the server would hold it for minutes. 503 with Retry-After instead.
   * With `until`, a caller that waits anyway is answered as late as that instead (see `ReadOptions`).
   */
  async read<T>(thread: ThreadRef, query: () => Promise<T>, { until }: ReadOptions = {}): Promise<T> {
    const started = Date.now();
    const deadline = Math.max(until ?? 0, started + this.config.api.readTimeoutMs);
    try {
      return await this.client.withDeadline(Date.now() + this.config.api.readTimeoutMs, query);
    } catch (error) {
      // A failed read is explained by the thread's description first: a deleted thread (its
      // tombstone has no worker to answer) is a 404, one under a key this API lacks says so.
      await this.requireExisting(thread);
      if (!isStall(error)) throw error;
      // A live worker holds the thread's workflow task (a waited run's model call is made inside
      // it): the query is answered when that task ends, so it is awaited that long, not refused.
      // The server holds one query per workflow while its task runs and refuses others at once
      // (RESOURCE_EXHAUSTED): those ask again, a moment later, until the task's time is up.
      const heldUntil = Math.max(Date.now() + (await this.#taskHeldFor(thread).catch(() => 0)), until ?? 0);
      while (Date.now() < heldUntil) {
        try {
          return await this.client.withDeadline(heldUntil, query);
        } catch (again) {
          if (!isStall(again)) throw again;
          await sleep(heldQueryPauseMs);
        }
      }
      // The queries a task held are refused when it ends: asked once more, what is left of the
      // read's own time (a moment at least), it is answered by the thread as it now is.
      const leftMs = Math.max(heldQueryLastMs, deadline - Date.now());
      try {
        return await this.client.withDeadline(Date.now() + leftMs, query);
      } catch (last) {
        if (!isStall(last)) throw last;
      }
      throw new ApiError(
        503,
        'thread_unavailable',
        `thread ${thread.thread_id} did not answer within ${Date.now() - started} ms: no worker holds it right now (a restart or a deploy); nothing is lost, retry shortly`,
      );
    }
  }

  /** Whether waited runs make their model calls as local activities (`KEEL_LOCAL_MODEL_CALLS`). */
  get localModelCalls(): boolean {
    return this.config.api.localModelCalls;
  }

  /** Hands input to the thread by update, or by signal when it cannot take it now (see intake.ts). */
  #deliver<T>(
    byUpdate: () => Promise<T>,
    bySignal: () => Promise<void>,
    holdSignal?: () => Promise<number>,
  ): Promise<Delivery<T>> {
    const answerWithinMs = this.config.api.intakeWaitMs;
    const timings = { signalAfterMs: Math.min(250, Math.floor(answerWithinMs / 3)), answerWithinMs };
    return deliver({
      client: this.client,
      timings,
      byUpdate,
      bySignal,
      ...(holdSignal === undefined ? {} : { holdSignal }),
    });
  }

  /**
   * How long a worker may still hold the thread's workflow task (0 when none does): a waiting
   * run's first model call is made inside the task that accepts its input (a local activity), so
   * the thread's answer comes when that call ends — at most the task's timeout, after which the
   * worker reports the task and the acceptance with it, or is dead and the input goes by signal.
   */
  async #taskHeldFor(thread: ThreadRef): Promise<number> {
    const { raw } = await this.client.withDeadline(Date.now() + this.config.api.readTimeoutMs, () =>
      this.handle(thread).describe(),
    );
    const task = raw.pendingWorkflowTask;
    if (task?.state !== temporal.api.enums.v1.PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED)
      return 0;
    const startedMs = protoMs(task.startedTime);
    const timeoutMs = protoMs(raw.executionConfig?.defaultWorkflowTaskTimeout) ?? 10_000;
    if (startedMs === undefined) return 0;
    return startedMs + timeoutMs + 1_000 - Date.now();
  }

  handle(thread: ThreadRef) {
    return this.client.workflow.getHandle<typeof conversationWorkflow>(thread.workflow_id);
  }

  threadConfig(input: ThreadConfigInput): ThreadConfig {
    const { defaults } = this.config;
    const maxTokens = input.max_tokens ?? defaults.maxTokens;
    const maxCost = input.max_cost_usd ?? defaults.maxCostUsd;
    return {
      model: input.model ?? this.config.model.default,
      approval: input.approval ?? defaults.approval,
      approval_timeout_s: input.approval_timeout_s ?? defaults.approvalTimeoutS,
      max_steps: input.max_steps ?? defaults.maxSteps,
      ...(input.system === undefined ? {} : { system: input.system }),
      ...(input.tool_rules === undefined ? {} : { tool_rules: input.tool_rules }),
      ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
      ...(maxCost === undefined ? {} : { max_cost_usd: maxCost }),
      ...(input.network_hosts === undefined || input.network_hosts.length === 0
        ? {}
        : { network_hosts: grantNetworkHosts(input.network_hosts, this.config.sandbox.networkHosts) }),
      ...(input.memory === true ? { memory: true } : {}),
    };
  }

  /** `firstMessage`: the input a run that creates its thread brings, for the Web UI's summary. */
  #startOptions(thread: ThreadRef, conversation: NewConversation, firstMessage?: messages.SubmitInput) {
    return {
      workflowId: thread.workflow_id,
      taskQueue: this.config.taskQueue,
      args: [conversation] as [NewConversation],
      memo: { metadata: conversation.metadata, created_at: conversation.created_at },
      staticSummary: summarizeThread({
        ...conversation,
        first_message: firstMessage === undefined ? undefined : textOf(firstMessage.content),
      }),
      staticDetails: threadDetails(conversation),
      typedSearchAttributes: [
        { key: searchAttributes.status, value: 'idle' },
        { key: searchAttributes.owner, value: conversation.owner ?? 'local' },
        { key: searchAttributes.model, value: conversation.config.model },
        { key: searchAttributes.costUsd, value: 0 },
        { key: searchAttributes.turns, value: 0 },
      ],
    };
  }

  newConversation(
    threadId: string | undefined,
    owner: Owner,
    metadata: Record<string, unknown>,
    config: ThreadConfigInput,
  ): NewConversation {
    return {
      thread_id: threadId ?? randomUUID(),
      ...(owner === undefined ? {} : { owner }),
      metadata,
      config: this.threadConfig(config),
      created_at: new Date().toISOString(),
    };
  }

  /**
   * Starts the thread's workflow, at the id scoped to its owner (decision 0160): another owner's
   * thread of the same id is another workflow, so it is neither found nor refused here. A thread
   * of the caller's own made before ids were scoped holds the id as it always did.
   * The view is built from the input: the workflow shows the same.
   */
  async createThread(conversation: NewConversation, ifExists: 'raise' | 'do_nothing'): Promise<Thread> {
    const { owner } = conversation;
    const thread = threadRef(conversation.thread_id, owner);
    const own = owner === undefined ? undefined : await this.#ownUnscoped(conversation.thread_id, owner);
    if (own !== undefined) {
      if (ifExists === 'do_nothing') return this.getThread(own, owner);
      throw threadExists();
    }
    try {
      // A closed thread keeps its id; a deleted (terminated) one frees it at once.
      await this.client.workflow.start('conversationWorkflow', {
        ...this.#startOptions(thread, conversation),
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      });
    } catch (error) {
      if (ifExists === 'do_nothing' && error instanceof WorkflowExecutionAlreadyStartedError) {
        return this.getThread(thread, owner);
      }
      throw error;
    }
    return {
      thread_id: conversation.thread_id,
      ...(conversation.owner === undefined ? {} : { owner: conversation.owner }),
      status: 'idle',
      metadata: conversation.metadata,
      config: conversation.config,
      created_at: conversation.created_at,
      updated_at: conversation.created_at,
      usage: zeroUsage,
      summary: { runs: 0, steps: 0, tokens: 0, cost_usd: 0, duration_ms: 0 },
      queued_run_ids: [],
      messages_count: 0,
    };
  }

  /**
   * The thread as it answers (after `authorize`), or 404 when it belongs to someone else.
   * A deleted thread that was running still answers queries: `authorize` tells it apart.
   */
  async getThread(thread: ThreadRef, owner: Owner): Promise<Thread> {
    const found = await this.read(thread, () => this.handle(thread).query(messages.getThreadQuery));
    if (owner !== undefined && found.owner !== owner) throw threadNotFound(thread.thread_id);
    return found;
  }

  /**
   * The caller's thread `threadId`, or 404 unless it exists, is not deleted, and (when the API
   * authenticates) is the caller's — from the workflow's status and owner search attribute, which
   * the server answers without a worker. With tokens it is looked for at the id scoped to the
   * caller, then at the unscoped id a thread of hers made before ids were scoped still holds
   * (decision 0160). Another owner's thread of the same id is never looked at under her scope,
   * and at the unscoped id answers the same 404 as an id nobody holds.
   */
  async authorize(threadId: string, owner: Owner): Promise<ThreadRef> {
    const thread = threadRef(threadId, owner);
    let description: Description;
    try {
      description = await this.handle(thread).describe();
    } catch (error) {
      if (owner === undefined || !(error instanceof WorkflowNotFoundError)) throw error;
      const unscoped = unscopedRef(threadId);
      requireVisible(unscoped, await this.handle(unscoped).describe(), owner);
      return unscoped;
    }
    requireVisible(thread, description, owner);
    this.#authorized.set(authorizedKey(thread, owner), true);
    return thread;
  }

  /**
   * The caller's thread `threadId` without asking its description, when `authorize` found it hers
   * and it has accepted a waiting input through this API since it was last found ended; else
   * undefined (decision 0302): the describe was one of a turn's three Temporal calls, each ~1–1.5 ms
   * of the API's work. Only for sending it input: an ended thread takes no update, so that call
   * itself finds a thread closed or deleted since (not found), and the caller then authorizes it
   * as usual. Reads do not use it: a deleted thread still answers queries.
   */
  knownThread(threadId: string, owner: Owner): ThreadRef | undefined {
    const thread = threadRef(threadId, owner);
    if (!this.#running.has(thread.workflow_id) || !this.#authorized.has(authorizedKey(thread, owner)))
      return undefined;
    return thread;
  }

  /**
   * Where a run that may create its thread (`if_not_exists: "create"`) goes: the caller's thread
   * of that id if she has one (scoped, or unscoped from before ids were scoped), else the id a
   * new thread of hers gets. Another owner's thread of the same id is never reached, and changes
   * nothing in the answer.
   */
  async resolveForCreate(threadId: string, owner: Owner): Promise<ThreadRef> {
    const thread = threadRef(threadId, owner);
    if (owner === undefined) return thread;
    try {
      const description = await this.handle(thread).describe();
      // Held at her scope by someone else: only two owners whose scopes collide (see scopeFor).
      if (description.status.name !== deletedStatus) requireVisible(thread, description, owner);
      return thread;
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
    }
    return (await this.#ownUnscoped(threadId, owner)) ?? thread;
  }

  /** The caller's live thread at the unscoped id (made before ids were scoped), if there is one. */
  async #ownUnscoped(threadId: string, owner: string): Promise<ThreadRef | undefined> {
    const unscoped = unscopedRef(threadId);
    try {
      requireVisible(unscoped, await this.handle(unscoped).describe(), owner);
      return unscoped;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError || error instanceof ApiError) return undefined;
      throw error;
    }
  }

  /**
   * 404 for a thread that does not exist or was deleted. Temporal removes a deleted workflow's
   * history some 30 s after it was asked to; DELETE terminates the workflow first, so a
   * terminated workflow is a deleted thread from the moment DELETE answers (see thread-directory.ts).
   */
  async requireExisting(thread: ThreadRef): Promise<void> {
    const description = await this.handle(thread).describe();
    if (description.status.name === deletedStatus) throw threadNotFound(thread.thread_id);
  }

  /** The operator's full state dump (after the owner check). */
  async debugState(threadId: string, owner: Owner): Promise<messages.StateDump> {
    const thread = await this.authorize(threadId, owner);
    return this.read(thread, () => this.handle(thread).query(messages.getStateQuery));
  }

  /**
   * The transcript; with `after`, only the messages after the first `after` ever appended. Read
   * in bounded pages, and only what is new since this API's last read of the thread.
   */
  async transcript(thread: ThreadRef, after?: number, options: ReadOptions = {}): Promise<Message[]> {
    const handle = this.handle(thread);
    return this.read(
      thread,
      () =>
        after === undefined
          ? this.#transcripts.read(thread.workflow_id, handle)
          : this.#transcripts.readAfter(handle, after),
      options,
    );
  }

  /**
   * The whole transcript as LangChain messages, as JSON text (`JSON.stringify` of
   * `toLangChainMessages`): only the messages new since this API's last answer for the thread are
   * converted and serialized.
   */
  async transcriptLangChainJson(thread: ThreadRef, options: ReadOptions = {}, run?: Run): Promise<string> {
    const carried = run === undefined ? undefined : this.#carried.get(run);
    const messages =
      (carried === undefined
        ? undefined
        : this.#transcripts.withPage(thread.workflow_id, carried.after, carried.page)) ??
      (await this.transcript(thread, undefined, options));
    return this.#langChainJson.of(thread.workflow_id, messages);
  }

  /** The earlier branches forks cut off, and whether the transcript's front was compacted. */
  async branches(thread: ThreadRef): Promise<messages.ThreadBranches> {
    return this.read(thread, () => this.handle(thread).query(messages.getBranchesQuery));
  }

  /** `run`: a waited run `submitRun` answered with, whose answer may have carried them. */
  pendingApprovals(thread: ThreadRef, options: ReadOptions = {}, run?: Run): Promise<PendingApproval[]> {
    const carried = run === undefined ? undefined : this.#carried.get(run)?.pending_approvals;
    if (carried !== undefined) return Promise.resolve(carried);
    return this.read(thread, () => this.handle(thread).query(messages.getPendingApprovalsQuery), options);
  }

  /**
   * Submits a run. A `run_id` already on the thread returns that run (creation is idempotent);
   * with `create` a missing thread is created in the same call. When the thread cannot take the
   * input at once, it is written to the thread's history by signal and answered as `queued`.
   *
   * With `wait`, the same update also answers once the run is over or waits on a human: the
   * input counts as taken once the thread accepted it, `settled` then resolves with the run's
   * answer (unfinished when the thread handed over first, or answered without waiting: a worker
   * of an earlier release). One update for a `runs/wait`, no second one to await the run.
   */
  async submitRun(
    thread: ThreadRef,
    input: messages.SubmitInput,
    create: NewConversation | undefined,
    { wait = false, deadline = Infinity }: { wait?: boolean; deadline?: number } = {},
  ): Promise<Submitted> {
    try {
      if (wait) {
        // The thread's acceptance is awaited while a worker holds its task, but never past the
        // caller's own deadline: then the input goes by signal, durable before the caller hears.
        const submitted = Date.now();
        const holdSignal = async () => {
          // Queued behind a busy fleet: held without asking (decision 0300), since a description would
          // show a task no worker holds yet, sending the input by signal onto the slow path; else while a
          // worker holds the thread's task.
          const queued = this.#fleet.holdFor(submitted);
          return Math.min(queued > 0 ? queued : await this.#taskHeldFor(thread), deadline - Date.now());
        };
        const delivery = await this.#deliver(
          () => this.#startWaitingUpdate(thread, input, create),
          () => this.#submitBySignal(thread, input, create),
          holdSignal,
        );
        this.#stopsAnswer(thread, input);
        if (delivery.kind === 'taken') {
          const model = create?.config.model ?? this.config.model.default;
          // The run as the thread took it is only known at its end; until then, as its input says.
          const handle = delivery.value;
          return {
            run: queuedRun({ thread_id: thread.thread_id, model }, input, Date.now()),
            settled: async (signal) =>
              this.#settledRun(await withCallSignal(this.client, signal, () => handle.result())),
          };
        }
        return { run: await this.#queued(thread, input, create) };
      }
      const delivery = await this.#deliver(
        () => this.#submitByUpdate(thread, input, create),
        () => this.#submitBySignal(thread, input, create),
      );
      this.#stopsAnswer(thread, input);
      if (delivery.kind === 'taken') return { run: delivery.value };
      return { run: await this.#queued(thread, input, create) };
    } catch (error) {
      if (
        error instanceof WorkflowUpdateFailedError &&
        error.cause instanceof ApplicationFailure &&
        error.cause.type === 'RunExists'
      ) {
        return { run: await this.getRun(thread, input.run_id) };
      }
      throw error;
    }
  }

  /** An interrupting input, once delivered, stops the answer under way as a Stop does. */
  #stopsAnswer(thread: ThreadRef, input: messages.SubmitInput): void {
    if (input.multitask_strategy === MultitaskStrategy.interrupt) this.askToBeat?.(thread.workflow_id);
  }

  /**
   * The run a waiting update answered; what came with it (decision 0255) is kept for the values'
   * reads, by the run object. A worker of an earlier release answers the run alone.
   */
  #settledRun(answer: Run | messages.WaitedRun): Run {
    if (!('run' in answer)) return answer;
    if (answer.values !== undefined) this.#carried.set(answer.run, answer.values);
    return answer.run;
  }

  async #queued(thread: ThreadRef, input: messages.SubmitInput, create: NewConversation | undefined) {
    const model = create?.config.model ?? (await this.#modelOf(thread));
    return queuedRun({ thread_id: thread.thread_id, model }, input, Date.now());
  }

  #submitByUpdate(
    thread: ThreadRef,
    input: messages.SubmitInput,
    create: NewConversation | undefined,
  ): Promise<Run> {
    if (create === undefined)
      return this.handle(thread).executeUpdate(messages.submitInputUpdate, { args: [input] });
    const startWorkflowOperation = new WithStartWorkflowOperation<typeof conversationWorkflow>(
      'conversationWorkflow',
      { ...this.#startOptions(thread, create, input), workflowIdConflictPolicy: 'USE_EXISTING' },
    );
    return this.client.workflow.executeUpdateWithStart(messages.submitInputUpdate, {
      args: [input],
      startWorkflowOperation,
    });
  }

  /** The same update asked to answer at the run's end: resolves once the thread accepted it. */
  #startWaitingUpdate(
    thread: ThreadRef,
    input: messages.SubmitInput,
    create: NewConversation | undefined,
  ): Promise<WorkflowUpdateHandle<Run | messages.WaitedRun>> {
    // The messages this API does not hold yet come with the answer when they are few, so no query
    // follows the update (0255).
    const maxChars = this.config.api.waitValuesChars;
    const values = { after: this.#transcripts.keptAfter(thread.workflow_id), max_chars: maxChars };
    const args: [messages.SubmitInput, messages.SubmitOptions] = [
      input,
      maxChars > 0 ? { wait: true, values } : { wait: true },
    ];
    const accepted = (handle: WorkflowUpdateHandle<Run | messages.WaitedRun>) => {
      this.#fleet.accepted();
      this.#running.set(thread.workflow_id, true);
      return handle;
    };
    const update = () =>
      this.handle(thread)
        .startUpdate(messages.waitingSubmitInputUpdate, { args, waitForStage: WorkflowUpdateStage.ACCEPTED })
        .then(accepted, (error: unknown) => {
          // Ended (closed, deleted): no longer taken for running (0301, 0302).
          if (error instanceof WorkflowNotFoundError) this.#running.delete(thread.workflow_id);
          throw error;
        });
    if (create === undefined) return update();
    // A thread that took an input through this API a moment ago is most likely still running: the
    // update alone reaches it, without the start request's memo, summary, search attributes and
    // arguments to encode and check (decision 0301). Ended since (closed, deleted), it answers not
    // found, and the input is asked with the start, as it would have been.
    if (this.#running.has(thread.workflow_id))
      return update().catch((error: unknown) => {
        if (!(error instanceof WorkflowNotFoundError)) throw error;
        return this.#startWaitingUpdateWithStart(thread, create, input, args, accepted);
      });
    return this.#startWaitingUpdateWithStart(thread, create, input, args, accepted);
  }

  #startWaitingUpdateWithStart(
    thread: ThreadRef,
    create: NewConversation,
    input: messages.SubmitInput,
    args: [messages.SubmitInput, messages.SubmitOptions],
    accepted: (
      handle: WorkflowUpdateHandle<Run | messages.WaitedRun>,
    ) => WorkflowUpdateHandle<Run | messages.WaitedRun>,
  ): Promise<WorkflowUpdateHandle<Run | messages.WaitedRun>> {
    const startWorkflowOperation = new WithStartWorkflowOperation<typeof conversationWorkflow>(
      'conversationWorkflow',
      { ...this.#startOptions(thread, create, input), workflowIdConflictPolicy: 'USE_EXISTING' },
    );
    return this.client.workflow
      .startUpdateWithStart(messages.waitingSubmitInputUpdate, {
        args,
        waitForStage: WorkflowUpdateStage.ACCEPTED,
        startWorkflowOperation,
      })
      .then(accepted);
  }

  async #submitBySignal(
    thread: ThreadRef,
    input: messages.SubmitInput,
    create: NewConversation | undefined,
  ): Promise<void> {
    if (create === undefined) {
      await this.handle(thread).signal(messages.userMessageSignal, input);
      return;
    }
    await this.client.workflow.signalWithStart('conversationWorkflow', {
      ...this.#startOptions(thread, create, input),
      signal: messages.userMessageSignal,
      signalArgs: [input],
    });
  }

  /** The thread's model as visibility records it (no worker needed), for a run answered as queued. */
  async #modelOf(thread: ThreadRef): Promise<string> {
    const description = await this.handle(thread).describe();
    return description.typedSearchAttributes.get(searchAttributes.model) ?? this.config.model.default;
  }

  /**
   * The run as the thread reports it now: one ask, at most `withinMs`, undefined when the thread
   * does not answer in time or at all. For checks repeated anyway (a wait watching for an
   * interrupt): unlike `read`, it never waits out a held task, so a loaded worker is not asked
   * again every 100 ms by every waiting caller.
   */
  async peekRun(thread: ThreadRef, runId: string, withinMs: number): Promise<Run | undefined> {
    const run = await this.client
      .withDeadline(Date.now() + withinMs, () =>
        this.handle(thread).query(messages.getRunQuery, { run_id: runId }),
      )
      .catch(() => null);
    return run ?? undefined;
  }

  /**
   * For a wait watching for an interrupt: the run when the thread may be waiting on a human, else
   * undefined. Asks the thread's description first — the server answers it from the workflow's
   * state, with no worker — and queries the run (`peekRun`) only when its `KeelStatus` says the
   * thread waits on a human (or the thread has ended, or does not say). A wait checks every second,
   * and on a loaded worker a query a second per waiting caller is what kept it loaded (decision 0303).
   */
  async peekInterruptedRun(thread: ThreadRef, runId: string, withinMs: number): Promise<Run | undefined> {
    const description = await this.client
      .withDeadline(Date.now() + withinMs, () => this.handle(thread).describe())
      .catch(() => undefined);
    if (description === undefined) return undefined;
    const status = description.typedSearchAttributes.get(searchAttributes.status);
    if (description.status.name === 'RUNNING' && status !== undefined && status !== ThreadStatus.interrupted)
      return undefined;
    return this.peekRun(thread, runId, withinMs);
  }

  async getRun(thread: ThreadRef, runId: string): Promise<Run> {
    const run = await this.read(thread, () =>
      this.handle(thread).query(messages.getRunQuery, { run_id: runId }),
    );
    if (run === null)
      throw new ApiError(404, 'run_not_found', `run ${runId} not found on thread ${thread.thread_id}`);
    return run;
  }

  /** Registers an A2A push notification config on an unfinished run (decision 0485). */
  setPushConfig(thread: ThreadRef, runId: string, config: PushConfig): Promise<PushConfig> {
    return this.read(thread, () =>
      this.handle(thread).executeUpdate(messages.setPushConfigUpdate, { args: [{ run_id: runId, config }] }),
    );
  }

  /** A run's A2A push notification configs: none once it ended (they were delivered). */
  pushConfigs(thread: ThreadRef, runId: string): Promise<PushConfig[]> {
    return this.read(thread, () =>
      this.handle(thread).query(messages.getPushConfigsQuery, { run_id: runId }),
    );
  }

  deletePushConfig(thread: ThreadRef, runId: string, configId: string): Promise<void> {
    return this.read(thread, () =>
      this.handle(thread).executeUpdate(messages.deletePushConfigUpdate, {
        args: [{ run_id: runId, config_id: configId }],
      }),
    );
  }

  listRuns(thread: ThreadRef, limit: number): Promise<Run[]> {
    return this.read(thread, () => this.handle(thread).query(messages.listRunsQuery, { limit }));
  }

  /**
   * Marks the run `deferred` (its caller stopped waiting). Cosmetic, so it is not queued by signal:
   * when the thread cannot answer now, the run is returned as `known` and left as it is.
   */
  async deferRun(thread: ThreadRef, known: Run): Promise<Run> {
    // Asked for longer than the caller is kept: a worker busy with the thread's task (a waited
    // run's model call is made inside it) takes the update when that task ends.
    const asking = this.client.withDeadline(Date.now() + deferralWithinMs, () =>
      this.handle(thread).executeUpdate(messages.deferRunUpdate, { args: [{ run_id: known.run_id }] }),
    );
    const answer = await Promise.race([
      asking.then(
        (run) => ({ run }),
        (error: unknown) => ({ error }),
      ),
      new Promise<undefined>((resolve) =>
        setTimeout(() => resolve(undefined), this.config.api.intakeWaitMs).unref(),
      ),
    ]);
    if (answer !== undefined && 'run' in answer) return answer.run;
    if (answer !== undefined && !isStall(answer.error)) throw answer.error;
    if (
      answer === undefined &&
      (known.status === 'queued' || known.status === 'running') &&
      (await this.#taskHeldFor(thread).catch(() => 0)) > 0
    )
      // The thread records it once its task ends; the caller hears now what it will say.
      return { ...known, status: 'deferred' as const };
    return known;
  }

  /** Cancels a run; `queued` when the cancel went by signal (the thread applies it when it can). */
  async cancelRun(thread: ThreadRef, runId: string, reason: string | undefined): Promise<Delivery<Run>> {
    const input = { run_id: runId, ...(reason === undefined ? {} : { reason }) };
    const delivery = await this.#deliver(
      () => this.handle(thread).executeUpdate(messages.requestCancelUpdate, { args: [input] }),
      () => this.handle(thread).signal(messages.cancelRunSignal, input),
    );
    // Taken, the cancel is on the call's activity already; queued, it is in history and the worker
    // asked beats once more a second later, when the thread has likely applied it.
    if (delivery.kind === 'queued' || !isTerminal(delivery.value.status))
      this.askToBeat?.(thread.workflow_id);
    return delivery;
  }

  /**
   * Decides an approval; `queued` when the decision went by signal. A decision for an approval
   * that one already in the thread's history decides is 409 `approval_not_pending`, even while no
   * worker runs to say so: the thread would apply the first and drop this one.
   */
  decideApproval(thread: ThreadRef, decision: DecideApprovalInput): Promise<Delivery<PendingApproval>> {
    return this.#deliver(
      () => this.handle(thread).executeUpdate(messages.decideApprovalUpdate, { args: [decision] }),
      async () => {
        if (await this.#decisionOnItsWay(thread, decision.approval_id))
          throw new ApiError(
            409,
            'approval_not_pending',
            `approval ${decision.approval_id} is already decided: a decision for it is in the thread's history`,
          );
        await this.handle(thread).signal(messages.approvalSignal, decision);
      },
    );
  }

  /** Whether the thread's history (its current run) holds an `approval` signal for this approval. */
  async #decisionOnItsWay(thread: ThreadRef, approvalId: string): Promise<boolean> {
    const history = await this.handle(thread).fetchHistory();
    for (const event of history.events ?? []) {
      const signaled = event.workflowExecutionSignaledEventAttributes;
      if (signaled?.signalName !== messages.approvalSignal.name) continue;
      const decided = await decodeFromPayloadsAtIndex<DecideApprovalInput>(
        this.client.options.loadedDataConverter,
        0,
        signaled.input?.payloads,
      ).catch(() => undefined);
      if (decided?.approval_id === approvalId) return true;
    }
    return false;
  }

  /** Merges keys into the thread's metadata; returns the thread. */
  async patchMetadata(threadId: string, owner: Owner, metadata: Record<string, unknown>): Promise<Thread> {
    const thread = await this.authorize(threadId, owner);
    return this.read(thread, () =>
      this.handle(thread).executeUpdate(messages.patchMetadataUpdate, { args: [{ metadata }] }),
    );
  }

  /** Records `graph_id`/`assistant_id` in the thread's metadata unless its memo already says so. */
  async recordAssistant(thread: ThreadRef, recorded: Record<string, string>): Promise<void> {
    const description = await this.handle(thread).describe();
    const metadata = ((description.memo ?? {}) as { metadata?: Record<string, unknown> }).metadata ?? {};
    if (Object.entries(recorded).every(([key, value]) => metadata[key] === value)) return;
    await this.read(thread, () =>
      this.handle(thread).executeUpdate(messages.patchMetadataUpdate, { args: [{ metadata: recorded }] }),
    );
  }

  /**
   * A new thread holding the source's transcript and configuration, as LangGraph's copy does: it
   * starts from the source's state (through the continue-as-new input), with no runs and no
   * spend of its own. A busy thread is not copied (409): its state is between steps.
   */
  async copyThread(threadId: string, owner: Owner): Promise<Thread> {
    const thread = await this.authorize(threadId, owner);
    const fresh = this.newConversation(undefined, owner, {}, {});
    const request: messages.CopyRequest = {
      thread_id: fresh.thread_id,
      ...(owner === undefined ? {} : { owner }),
      created_at: fresh.created_at,
    };
    const copy = await this.read(thread, () =>
      this.handle(thread).query(messages.getThreadCopyQuery, request),
    ).catch((error: unknown) => {
      // A worker of an earlier release holds the thread (a deploy under way): it has no copy query.
      if (error instanceof QueryNotRegisteredError)
        throw new ApiError(
          503,
          'thread_unavailable',
          `thread ${threadId} is held by a worker of an earlier release, which cannot copy it; retry once the deploy is done`,
        );
      throw error;
    });
    if (copy.busy)
      throw new ApiError(
        409,
        'thread_busy',
        `thread ${threadId} has a run under way; copy it once the run is over`,
      );
    const created: NewConversation = { ...fresh, metadata: copy.metadata, config: copy.config };
    const copied = threadRef(created.thread_id, owner);
    await this.client.workflow.start<typeof conversationWorkflow>('conversationWorkflow', {
      ...this.#startOptions(copied, created),
      args: [{ ...created, carried: copy.carried as unknown as Carried }, ...(copy.parts as CarriedPart[])],
    });
    return this.getThread(copied, owner);
  }

  /** The stream offset now: events published after this are at or beyond it. */
  currentOffset(thread: ThreadRef): Promise<number> {
    return this.read(thread, () => WorkflowStreamClient.create(this.client, thread.workflow_id).getOffset());
  }

  /** The oldest offset the thread's event log still holds. */
  streamBase(thread: ThreadRef): Promise<number> {
    return this.read(thread, () => this.handle(thread).query(messages.getStreamBaseQuery));
  }
}
