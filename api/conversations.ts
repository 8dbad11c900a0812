/**
 * The API's side of Temporal: threads are workflows, runs are `submitInput` updates, reads are
 * queries. Routes call this and nothing else touches the client.
 */
import { randomUUID } from 'node:crypto';
import {
  type Client,
  WithStartWorkflowOperation,
  WorkflowExecutionAlreadyStartedError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { ApplicationFailure, WorkflowNotFoundError } from '@temporalio/common';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import type { DecideApprovalInput, PendingApproval } from '../common/approvals';
import type { KeelConfig } from '../common/config';
import * as messages from '../common/messages';
import { queuedRun, type Run } from '../common/run';
import { coveredBy, parseHostEntry, type HostEntry } from '../common/network-hosts';
import { searchAttributes } from '../common/search-attributes';
import { workflowIdFor, type Thread, type ThreadConfig } from '../common/thread';

import { textOf, type Message } from '../common/transcript';
import { zeroUsage } from '../common/usage';
import type { NewConversation, conversationWorkflow } from '../workflows/interpreter/workflow';
import { splitCarried } from '../workflows/interpreter/carried';
import { initialState, type ThreadState } from '../workflows/core/state';
import { summarizeThread } from '../workflows/core/summaries';
import { checkOutboundUrl, RefusedUrl } from '../activities/outbound-address';
import { ApiError, threadNotFound } from './errors';
import { deliver, isStall, type Delivery } from './intake';
import type { ThreadConfigInput } from './schemas';
import { TranscriptReader } from './transcript-reader';

/** The event log of a thread that has published nothing yet. */
const emptyStream = { log: [], base_offset: 0, publisher_sequences: {}, publisher_last_seen: {} };

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

/** The hosts asked for, each within the operator's `KEEL_SANDBOX_NETWORK_HOSTS`; else 422. */
export function grantNetworkHosts(asked: readonly string[], granted: readonly HostEntry[]): string[] {
  for (const raw of asked) {
    const entry = parseHostEntry(raw);
    if (typeof entry === 'string' || !coveredBy(granted, entry))
      throw new ApiError(
        422,
        'network_host_not_allowed',
        `network host "${raw}" is not one the operator allows threads to reach (KEEL_SANDBOX_NETWORK_HOSTS${granted.length === 0 ? ' is empty' : ''})`,
        'config.network_hosts',
      );
  }
  return asked.map((raw) => raw.trim().toLowerCase());
}

export class Conversations {
  readonly #transcripts = new TranscriptReader();

  constructor(
    readonly client: Client,
    private readonly config: Pick<
      KeelConfig,
      'taskQueue' | 'model' | 'defaults' | 'webhookAllowHosts' | 'sandbox'
    > & {
      api: Pick<KeelConfig['api'], 'intakeWaitMs' | 'readTimeoutMs'>;
    },
  ) {}

  /** Refuses (422) a webhook URL that leads to loopback, private, link-local or metadata addresses. */
  async checkWebhook(url: string): Promise<void> {
    try {
      await checkOutboundUrl(url, this.config.webhookAllowHosts);
    } catch (error) {
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
   */
  async read<T>(threadId: string, query: () => Promise<T>): Promise<T> {
    try {
      return await this.client.withDeadline(Date.now() + this.config.api.readTimeoutMs, query);
    } catch (error) {
      // A failed read is explained by the thread's description first: a deleted thread (its
      // tombstone has no worker to answer) is a 404, one under a key this API lacks says so.
      await this.requireExisting(threadId);
      if (!isStall(error)) throw error;
      throw new ApiError(
        503,
        'thread_unavailable',
        `thread ${threadId} did not answer within ${this.config.api.readTimeoutMs} ms: no worker holds it right now (a restart or a deploy); nothing is lost, retry shortly`,
      );
    }
  }

  /** Hands input to the thread by update, or by signal when it cannot take it now (see intake.ts). */
  #deliver<T>(byUpdate: () => Promise<T>, bySignal: () => Promise<void>): Promise<Delivery<T>> {
    const answerWithinMs = this.config.api.intakeWaitMs;
    const timings = { signalAfterMs: Math.min(250, Math.floor(answerWithinMs / 3)), answerWithinMs };
    return deliver({ client: this.client, timings, byUpdate, bySignal });
  }

  handle(threadId: string) {
    return this.client.workflow.getHandle<typeof conversationWorkflow>(workflowIdFor(threadId));
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
    };
  }

  /** `firstMessage`: the input a run that creates its thread brings, for the Web UI's summary. */
  #startOptions(conversation: NewConversation, firstMessage?: messages.SubmitInput) {
    return {
      workflowId: workflowIdFor(conversation.thread_id),
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

  /** Starts the thread's workflow. The view is built from the input: the workflow shows the same. */
  async createThread(conversation: NewConversation, ifExists: 'raise' | 'do_nothing'): Promise<Thread> {
    try {
      // A closed thread keeps its id; a deleted (terminated) one frees it at once.
      await this.client.workflow.start('conversationWorkflow', {
        ...this.#startOptions(conversation),
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      });
    } catch (error) {
      if (ifExists === 'do_nothing' && error instanceof WorkflowExecutionAlreadyStartedError) {
        return this.getThread(conversation.thread_id, conversation.owner);
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

  /** The thread, or 404 when it does not exist, was deleted, or belongs to someone else. */
  async getThread(threadId: string, owner: Owner): Promise<Thread> {
    // Both checks: a deleted thread that was running still answers queries (a failed read
    // explains itself by the same check, see `read`).
    const [thread] = await Promise.all([
      this.read(threadId, () => this.handle(threadId).query(messages.getThreadQuery)),
      this.requireExisting(threadId),
    ]);
    if (owner !== undefined && thread.owner !== owner) throw threadNotFound(threadId);
    return thread;
  }

  /**
   * 404 unless the thread exists, is not deleted, and (when the API authenticates) is the
   * caller's — from the workflow's status and owner search attribute, which the server answers
   * without a worker.
   */
  async authorize(threadId: string, owner: Owner): Promise<void> {
    const description = await this.handle(threadId).describe();
    if (description.status.name === deletedStatus) throw threadNotFound(threadId);
    if (owner !== undefined && description.typedSearchAttributes.get(searchAttributes.owner) !== owner)
      throw threadNotFound(threadId);
  }

  /**
   * Before a run that may create its thread (`if_not_exists: "create"`): an id another owner
   * holds answers 404 like any thread the caller cannot see, so the input never reaches that
   * thread (update-with-start would otherwise deliver it to the existing workflow).
   */
  async authorizeCreate(threadId: string, owner: Owner): Promise<void> {
    if (owner === undefined) return;
    let description;
    try {
      description = await this.handle(threadId).describe();
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return;
      throw error;
    }
    if (description.status.name === deletedStatus) return;
    if (description.typedSearchAttributes.get(searchAttributes.owner) !== owner)
      throw threadNotFound(threadId);
  }

  /**
   * 404 for a thread that does not exist or was deleted. Temporal removes a deleted workflow's
   * history some 30 s after it was asked to; DELETE terminates the workflow first, so a
   * terminated workflow is a deleted thread from the moment DELETE answers (see sessions.ts).
   */
  async requireExisting(threadId: string): Promise<void> {
    const description = await this.handle(threadId).describe();
    if (description.status.name === deletedStatus) throw threadNotFound(threadId);
  }

  /** The operator's full state dump (after the owner check). */
  async debugState(threadId: string, owner: Owner): Promise<messages.StateDump> {
    await this.authorize(threadId, owner);
    return this.read(threadId, () => this.handle(threadId).query(messages.getStateQuery));
  }

  /**
   * The transcript; with `after`, only the messages after the first `after` ever appended. Read
   * in bounded pages, and only what is new since this API's last read of the thread.
   */
  async transcript(threadId: string, after?: number): Promise<Message[]> {
    const handle = this.handle(threadId);
    return this.read(threadId, () =>
      after === undefined
        ? this.#transcripts.read(threadId, handle)
        : this.#transcripts.readAfter(handle, after),
    );
  }

  /** The earlier branches forks cut off, and whether the transcript's front was compacted. */
  async branches(threadId: string): Promise<messages.ThreadBranches> {
    return this.read(threadId, () => this.handle(threadId).query(messages.getBranchesQuery));
  }

  pendingApprovals(threadId: string): Promise<PendingApproval[]> {
    return this.read(threadId, () => this.handle(threadId).query(messages.getPendingApprovalsQuery));
  }

  /**
   * Submits a run. A `run_id` already on the thread returns that run (creation is idempotent);
   * with `create` a missing thread is created in the same call. When the thread cannot take the
   * input at once, it is written to the thread's history by signal and answered as `queued`.
   */
  async submitRun(
    threadId: string,
    input: messages.SubmitInput,
    create: NewConversation | undefined,
  ): Promise<Run> {
    try {
      const delivery = await this.#deliver(
        () => this.#submitByUpdate(threadId, input, create),
        () => this.#submitBySignal(threadId, input, create),
      );
      if (delivery.kind === 'taken') return delivery.value;
      const model = create?.config.model ?? (await this.#modelOf(threadId));
      return queuedRun({ thread_id: threadId, model }, input, Date.now());
    } catch (error) {
      if (
        error instanceof WorkflowUpdateFailedError &&
        error.cause instanceof ApplicationFailure &&
        error.cause.type === 'RunExists'
      ) {
        return this.getRun(threadId, input.run_id);
      }
      throw error;
    }
  }

  #submitByUpdate(
    threadId: string,
    input: messages.SubmitInput,
    create: NewConversation | undefined,
  ): Promise<Run> {
    if (create === undefined)
      return this.handle(threadId).executeUpdate(messages.submitInputUpdate, { args: [input] });
    const startWorkflowOperation = new WithStartWorkflowOperation<typeof conversationWorkflow>(
      'conversationWorkflow',
      { ...this.#startOptions(create, input), workflowIdConflictPolicy: 'USE_EXISTING' },
    );
    return this.client.workflow.executeUpdateWithStart(messages.submitInputUpdate, {
      args: [input],
      startWorkflowOperation,
    });
  }

  async #submitBySignal(
    threadId: string,
    input: messages.SubmitInput,
    create: NewConversation | undefined,
  ): Promise<void> {
    if (create === undefined) {
      await this.handle(threadId).signal(messages.userMessageSignal, input);
      return;
    }
    await this.client.workflow.signalWithStart('conversationWorkflow', {
      ...this.#startOptions(create, input),
      signal: messages.userMessageSignal,
      signalArgs: [input],
    });
  }

  /** The thread's model as visibility records it (no worker needed), for a run answered as queued. */
  async #modelOf(threadId: string): Promise<string> {
    const description = await this.handle(threadId).describe();
    return description.typedSearchAttributes.get(searchAttributes.model) ?? this.config.model.default;
  }

  async getRun(threadId: string, runId: string): Promise<Run> {
    const run = await this.read(threadId, () =>
      this.handle(threadId).query(messages.getRunQuery, { run_id: runId }),
    );
    if (run === null)
      throw new ApiError(404, 'run_not_found', `run ${runId} not found on thread ${threadId}`);
    return run;
  }

  listRuns(threadId: string, limit: number): Promise<Run[]> {
    return this.read(threadId, () => this.handle(threadId).query(messages.listRunsQuery, { limit }));
  }

  /**
   * Marks the run `deferred` (its caller stopped waiting). Cosmetic, so it is not queued by signal:
   * when the thread cannot answer now, the run is returned as `known` and left as it is.
   */
  async deferRun(threadId: string, known: Run): Promise<Run> {
    try {
      return await this.client.withDeadline(Date.now() + this.config.api.intakeWaitMs, () =>
        this.handle(threadId).executeUpdate(messages.deferRunUpdate, { args: [{ run_id: known.run_id }] }),
      );
    } catch (error) {
      if (isStall(error)) return known;
      throw error;
    }
  }

  /** Cancels a run; `queued` when the cancel went by signal (the thread applies it when it can). */
  cancelRun(threadId: string, runId: string, reason: string | undefined): Promise<Delivery<Run>> {
    const input = { run_id: runId, ...(reason === undefined ? {} : { reason }) };
    return this.#deliver(
      () => this.handle(threadId).executeUpdate(messages.requestCancelUpdate, { args: [input] }),
      () => this.handle(threadId).signal(messages.cancelRunSignal, input),
    );
  }

  /** Decides an approval; `queued` when the decision went by signal. */
  decideApproval(threadId: string, decision: DecideApprovalInput): Promise<Delivery<PendingApproval>> {
    return this.#deliver(
      () => this.handle(threadId).executeUpdate(messages.decideApprovalUpdate, { args: [decision] }),
      () => this.handle(threadId).signal(messages.approvalSignal, decision),
    );
  }

  /** Merges keys into the thread's metadata; returns the thread. */
  async patchMetadata(threadId: string, owner: Owner, metadata: Record<string, unknown>): Promise<Thread> {
    await this.authorize(threadId, owner);
    return this.read(threadId, () =>
      this.handle(threadId).executeUpdate(messages.patchMetadataUpdate, { args: [{ metadata }] }),
    );
  }

  /** Records `graph_id`/`assistant_id` in the thread's metadata unless its memo already says so. */
  async recordAssistant(threadId: string, recorded: Record<string, string>): Promise<void> {
    const description = await this.handle(threadId).describe();
    const metadata = ((description.memo ?? {}) as { metadata?: Record<string, unknown> }).metadata ?? {};
    if (Object.entries(recorded).every(([key, value]) => metadata[key] === value)) return;
    await this.read(threadId, () =>
      this.handle(threadId).executeUpdate(messages.patchMetadataUpdate, { args: [{ metadata: recorded }] }),
    );
  }

  /**
   * A new thread holding the source's transcript and configuration, as LangGraph's copy does: it
   * starts from the source's state (through the continue-as-new input), with no runs and no
   * spend of its own. A busy thread is not copied (409): its state is between steps.
   */
  async copyThread(threadId: string, owner: Owner): Promise<Thread> {
    await this.authorize(threadId, owner);
    const dump = await this.read(threadId, () => this.handle(threadId).query(messages.getStateQuery));
    const source = dump.state as unknown as ThreadState;
    if (source.active !== null || source.queue.length > 0)
      throw new ApiError(
        409,
        'thread_busy',
        `thread ${threadId} has a run under way; copy it once the run is over`,
      );
    const copy = this.newConversation(undefined, owner, source.thread.metadata, {});
    const created: NewConversation = { ...copy, config: source.thread.config };
    const state: ThreadState = {
      ...initialState({ ...created }),
      transcript: source.transcript,
      compacted_messages: source.compacted_messages,
      next_sequence: source.next_sequence,
      // The earlier branches forks left, so the copy's history lists the same checkpoints.
      ...(source.branches === undefined ? {} : { branches: source.branches }),
    };
    // In parts, as continue-as-new carries it: no payload is the whole transcript.
    const { carried, parts } = splitCarried(state, emptyStream);
    await this.client.workflow.start<typeof conversationWorkflow>('conversationWorkflow', {
      ...this.#startOptions(created),
      args: [{ ...created, carried }, ...parts],
    });
    return this.getThread(created.thread_id, owner);
  }

  /** The stream offset now: events published after this are at or beyond it. */
  currentOffset(threadId: string): Promise<number> {
    return this.read(threadId, () =>
      WorkflowStreamClient.create(this.client, workflowIdFor(threadId)).getOffset(),
    );
  }

  /** The oldest offset the thread's event log still holds. */
  streamBase(threadId: string): Promise<number> {
    return this.read(threadId, () => this.handle(threadId).query(messages.getStreamBaseQuery));
  }
}
