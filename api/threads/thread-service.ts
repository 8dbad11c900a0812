/**
 * Threads as the API serves them: whose a thread is (ids scoped per owner, decision 0160), making
 * and copying one, its metadata, and the reads of its transcript, branches and approvals. Every
 * call to the thread's workflow goes through the gateway (api/gateway/).
 */
import { LRUCache } from 'lru-cache';
import { randomUUID } from 'node:crypto';
import { QueryNotRegisteredError, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import type { PendingApproval, UpdateLimitsInput } from '../../common/approvals';
import * as messages from '../../common/messages';
import type { Run } from '../../common/run';
import { searchAttributes } from '../../common/search-attributes';
import type { Thread, ThreadConfig } from '../../common/thread';
import type { Message } from '../../common/transcript';
import { zeroUsage } from '../../common/usage';
import type { KeelConfig } from '../../platform/config';
import type { NewConversation } from '../../workflows/interpreter/workflow';
import { ApiError, threadExists, threadNotFound } from '../errors';
import type { RunIntake } from '../gateway/run-intake';
import {
  deletedStatus,
  type Description,
  type ReadOptions,
  type ThreadGateway,
} from '../gateway/thread-gateway';
import { LangChainJson } from '../protocol/langchain-json';
import type { ThreadConfigInput } from '../schemas';
import { grantNetworkHosts } from './thread-config';
import { threadRef, unscopedRef, type Owner, type ThreadRef } from './thread-ref';

/** How many owner-and-thread pairs `#authorized` remembers. */
const authorizedKept = 10_000;

const authorizedKey = (thread: ThreadRef, owner: Owner): string =>
  `${owner ?? ''}\u0000${thread.workflow_id}`;

/** 404 unless the described thread is there (not deleted) and, with tokens, `owner`'s. */
function requireVisible(thread: ThreadRef, description: Description, owner: Owner): void {
  if (description.status.name === deletedStatus) throw threadNotFound(thread.thread_id);
  if (owner !== undefined && description.typedSearchAttributes.get(searchAttributes.owner) !== owner)
    throw threadNotFound(thread.thread_id);
}

/** What the thread service needs of the configuration. */
export type ThreadServiceConfig = Pick<KeelConfig, 'model' | 'defaults' | 'sandbox'>;

export class ThreadService {
  readonly #gateway: ThreadGateway;
  readonly #intake: RunIntake;
  readonly #langChainJson = new LangChainJson();
  /** Owner and workflow of the threads `authorize` found visible to that owner (see `knownThread`). */
  readonly #authorized = new LRUCache<string, true>({ max: authorizedKept });

  constructor(
    gateway: ThreadGateway,
    intake: RunIntake,
    private readonly config: ThreadServiceConfig,
  ) {
    this.#gateway = gateway;
    this.#intake = intake;
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
      await this.#gateway.startThread(thread, conversation);
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
    const found = await this.#gateway.read(thread, () =>
      this.#gateway.query(thread, messages.getThreadQuery),
    );
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
      description = await this.#gateway.describe(thread);
    } catch (error) {
      if (owner === undefined || !(error instanceof WorkflowNotFoundError)) throw error;
      const unscoped = unscopedRef(threadId);
      requireVisible(unscoped, await this.#gateway.describe(unscoped), owner);
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
    if (!this.#intake.tookInput(thread) || !this.#authorized.has(authorizedKey(thread, owner)))
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
      const description = await this.#gateway.describe(thread);
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
      requireVisible(unscoped, await this.#gateway.describe(unscoped), owner);
      return unscoped;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError || error instanceof ApiError) return undefined;
      throw error;
    }
  }

  /** The operator's full state dump (after the owner check). */
  async debugState(threadId: string, owner: Owner): Promise<messages.StateDump> {
    const thread = await this.authorize(threadId, owner);
    return this.#gateway.read(thread, () => this.#gateway.query(thread, messages.getStateQuery));
  }

  /**
   * The whole transcript as LangChain messages, as JSON text (`JSON.stringify` of
   * `toLangChainMessages`): only the messages new since this API's last answer for the thread are
   * converted and serialized.
   */
  async transcriptLangChainJson(thread: ThreadRef, options: ReadOptions = {}, run?: Run): Promise<string> {
    const carried = run === undefined ? undefined : this.#intake.carriedWith(run);
    const messages =
      (carried === undefined
        ? undefined
        : this.#gateway.transcriptWithPage(thread, carried.after, carried.page)) ??
      (await this.transcript(thread, undefined, options));
    return this.#langChainJson.of(thread.workflow_id, messages);
  }

  /** The earlier branches forks cut off, and whether the transcript's front was compacted. */
  async branches(thread: ThreadRef): Promise<messages.ThreadBranches> {
    return this.#gateway.read(thread, () => this.#gateway.query(thread, messages.getBranchesQuery));
  }

  /** `run`: a waited run `submitRun` answered with, whose answer may have carried them. */
  pendingApprovals(thread: ThreadRef, options: ReadOptions = {}, run?: Run): Promise<PendingApproval[]> {
    const carried = run === undefined ? undefined : this.#intake.carriedWith(run)?.pending_approvals;
    if (carried !== undefined) return Promise.resolve(carried);
    return this.#gateway.read(
      thread,
      () => this.#gateway.query(thread, messages.getPendingApprovalsQuery),
      options,
    );
  }

  /** Merges keys into the thread's metadata; returns the thread. */
  async patchMetadata(threadId: string, owner: Owner, metadata: Record<string, unknown>): Promise<Thread> {
    const thread = await this.authorize(threadId, owner);
    return this.#gateway.read(thread, () =>
      this.#gateway.update(thread, messages.patchMetadataUpdate, { metadata }),
    );
  }

  /** Records `graph_id`/`assistant_id` in the thread's metadata unless its memo already says so. */
  async recordAssistant(thread: ThreadRef, recorded: Record<string, string>): Promise<void> {
    const description = await this.#gateway.describe(thread);
    const metadata = ((description.memo ?? {}) as { metadata?: Record<string, unknown> }).metadata ?? {};
    if (Object.entries(recorded).every(([key, value]) => metadata[key] === value)) return;
    await this.#gateway.read(thread, () =>
      this.#gateway.update(thread, messages.patchMetadataUpdate, { metadata: recorded }),
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
    const copy = await this.#gateway
      .read(thread, () => this.#gateway.query(thread, messages.getThreadCopyQuery, request))
      .catch((error: unknown) => {
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
    await this.#gateway.startCopy(copied, created, copy);
    return this.getThread(copied, owner);
  }
  /** The transcript, through the gateway's paged reads (see `ThreadGateway.transcript`). */
  transcript(thread: ThreadRef, after?: number, options: ReadOptions = {}): Promise<Message[]> {
    return this.#gateway.transcript(thread, after, options);
  }

  /** Raises or lowers the thread's budgets; returns the thread. */
  updateLimits(thread: ThreadRef, limits: UpdateLimitsInput): Promise<Thread> {
    return this.#gateway.read(thread, () =>
      this.#gateway.update(thread, messages.updateLimitsUpdate, limits),
    );
  }
}
