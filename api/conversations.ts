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
import { ApplicationFailure } from '@temporalio/common';
import type { KeelConfig } from '../common/config';
import * as messages from '../common/messages';
import type { Run } from '../common/run';
import { searchAttributes } from '../common/search-attributes';
import type { Thread, ThreadConfig } from '../common/thread';
import type { Message } from '../common/transcript';
import { zeroUsage } from '../common/usage';
import type { NewConversation, conversationWorkflow } from '../workflows/conversation-workflow';
import { ApiError, threadNotFound } from './errors';
import type { ThreadConfigInput } from './schemas';

export const workflowIdFor = (threadId: string): string => `conversation-${threadId}`;

/** A conversation workflow in this state is a deleted thread (only DELETE terminates one). */
export const deletedStatus = 'TERMINATED';

/** The caller, as authentication established it; undefined when the API runs without tokens. */
export type Owner = string | undefined;

export class Conversations {
  constructor(
    readonly client: Client,
    private readonly config: Pick<KeelConfig, 'taskQueue' | 'model' | 'defaults'>,
  ) {}

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
    };
  }

  #startOptions(conversation: NewConversation) {
    return {
      workflowId: workflowIdFor(conversation.thread_id),
      taskQueue: this.config.taskQueue,
      args: [conversation] as [NewConversation],
      memo: { metadata: conversation.metadata, created_at: conversation.created_at },
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
    const [thread] = await Promise.all([
      this.handle(threadId).query(messages.getThreadQuery),
      this.requireExisting(threadId),
    ]);
    if (owner !== undefined && thread.owner !== owner) throw threadNotFound(threadId);
    return thread;
  }

  /** 404 unless the thread exists, is not deleted, and (when the API authenticates) is the caller's. */
  async authorize(threadId: string, owner: Owner): Promise<void> {
    if (owner !== undefined) await this.getThread(threadId, owner);
    else await this.requireExisting(threadId);
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
    return this.handle(threadId).query(messages.getStateQuery);
  }

  async transcript(threadId: string): Promise<Message[]> {
    return this.handle(threadId).query(messages.getTranscriptQuery, {});
  }

  /**
   * Submits a run. A `run_id` already on the thread returns that run (creation is idempotent);
   * with `ifNotExists: 'create'` a missing thread is created in the same call.
   */
  async submitRun(
    threadId: string,
    input: messages.SubmitInput,
    create: NewConversation | undefined,
  ): Promise<Run> {
    try {
      if (create === undefined)
        return await this.handle(threadId).executeUpdate(messages.submitInputUpdate, { args: [input] });
      const startWorkflowOperation = new WithStartWorkflowOperation<typeof conversationWorkflow>(
        'conversationWorkflow',
        {
          ...this.#startOptions(create),
          workflowIdConflictPolicy: 'USE_EXISTING',
        },
      );
      return await this.client.workflow.executeUpdateWithStart(messages.submitInputUpdate, {
        args: [input],
        startWorkflowOperation,
      });
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

  async getRun(threadId: string, runId: string): Promise<Run> {
    const run = await this.handle(threadId).query(messages.getRunQuery, { run_id: runId });
    if (run === null)
      throw new ApiError(404, 'run_not_found', `run ${runId} not found on thread ${threadId}`);
    return run;
  }

  listRuns(threadId: string, limit: number): Promise<Run[]> {
    return this.handle(threadId).query(messages.listRunsQuery, { limit });
  }

  deferRun(threadId: string, runId: string): Promise<Run> {
    return this.handle(threadId).executeUpdate(messages.deferRunUpdate, { args: [{ run_id: runId }] });
  }

  cancelRun(threadId: string, runId: string, reason: string | undefined): Promise<Run> {
    return this.handle(threadId).executeUpdate(messages.requestCancelUpdate, {
      args: [{ run_id: runId, ...(reason === undefined ? {} : { reason }) }],
    });
  }
}
