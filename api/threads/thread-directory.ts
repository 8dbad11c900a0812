/**
 * The thread directory: every thread the namespace holds, found through Temporal visibility
 * (Keel's search attributes) without asking its workflow, and deleted. Search, count and
 * clean-up are built on it. Metadata lives in the memo, which visibility cannot filter, so
 * metadata filters are applied to the listed executions here, after the search-attribute query.
 */
import { isDeepStrictEqual } from 'node:util';
import { type Client, type WorkflowExecutionInfo, WorkflowNotFoundError } from '@temporalio/client';
import { childOriginOf } from '../../common/children';
import { scopeOf, type ThreadStatus } from '../../common/thread';
import { searchAttributes } from '../../common/search-attributes';
import { deletedStatus } from '../gateway/thread-gateway';
import type { Owner } from './thread-ref';
import { threadNotFound } from '../errors';
import type { AskToBeat } from '../streams/live-beat';
import { refOf, threadRef, unscopedRef, type ThreadRef } from './thread-ref';

/** A thread as visibility sees it: no query to its workflow is needed. */
export interface ThreadListing {
  thread_id: string;
  owner?: string;
  status: ThreadStatus;
  metadata: Record<string, unknown>;
  model?: string;
  cost_usd: number;
  turns: number;
  created_at: string;
  /** False once the workflow ended (the thread was closed). */
  open: boolean;
}

export interface ThreadFilter {
  status?: ThreadStatus | ThreadStatus[] | undefined;
  owner?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
  older_than_days?: number | undefined;
  ids?: string[] | undefined;
  /**
   * False leaves sub-agents' threads out (LangGraph's thread search and count, decision 0401): they
   * show inside their parent's thread. @default true
   */
  sub_agents?: boolean | undefined;
}

/** A thread a search found, and the workflow that holds it. */
export interface FoundThread {
  listing: ThreadListing;
  thread: ThreadRef;
}

/** Executions read past the metadata filter before a search gives up. */
const maxScanned = 10_000;

const quote = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/**
 * Whether a value can go into a visibility query. Temporal's SQL visibility (PostgreSQL: `keel up
 * --cluster`) writes the value into its statement, where a `?` is taken for a parameter: the
 * query fails ("could not determine data type of parameter"), as UNAVAILABLE, which the client
 * retries until its deadline. Such a value is checked on the listed threads instead.
 */
const queryable = (value: string): boolean => !value.includes('?');

/** The workflow ids a filter's thread ids name for this caller. */
function workflowIdsOf(ids: string[], caller: Owner): string[] {
  // A caller's thread is at her scoped id, or unscoped if made before ids were scoped (the owner
  // clause keeps out any other owner's thread there).
  return ids.flatMap((id) =>
    (caller === undefined ? [unscopedRef(id)] : [threadRef(id, caller), unscopedRef(id)]).map(
      ({ workflow_id }) => workflow_id,
    ),
  );
}

export class ThreadDirectory {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    /**
     * Asks the worker of a deleted thread's model call to beat, so that it learns at once that its
     * workflow is gone (decision 0420). @default none: it learns at its next beat
     */
    private readonly askToBeat?: AskToBeat,
  ) {}

  /** The visibility query for a filter; owner is forced to the caller when the API authenticates. */
  query(filter: ThreadFilter, caller: Owner, now: number): string {
    // A thread that continued as new has a closed execution per hand-over: only the latest is it.
    const clauses = [
      `WorkflowType = 'conversationWorkflow'`,
      `TaskQueue = ${quote(this.taskQueue)}`,
      `ExecutionStatus != 'ContinuedAsNew'`,
    ];
    const statuses = filter.status === undefined ? [] : [filter.status].flat();
    if (statuses.length > 0)
      clauses.push(`${searchAttributes.status.name} IN (${statuses.map(quote).join(', ')})`);
    if (filter.ids !== undefined) {
      const ids = workflowIdsOf(filter.ids, caller);
      if (ids.every(queryable)) clauses.push(`WorkflowId IN (${ids.map(quote).join(', ')})`);
    }
    const owner = caller ?? filter.owner;
    if (owner !== undefined && queryable(owner))
      clauses.push(`${searchAttributes.owner.name} = ${quote(owner)}`);
    // The current run's StartTime is never before the thread's creation (continue-as-new only
    // moves it later), so it narrows the search; the memo's created_at decides below.
    if (filter.older_than_days !== undefined)
      clauses.push(`StartTime < ${quote(new Date(cutoff(filter, now)).toISOString())}`);
    return clauses.join(' AND ');
  }

  async search(filter: ThreadFilter, caller: Owner, limit: number, now = Date.now()): Promise<FoundThread[]> {
    const found: FoundThread[] = [];
    // What the query could not say (see `queryable`), checked here.
    const ids = filter.ids === undefined ? undefined : new Set(workflowIdsOf(filter.ids, caller));
    const owner = caller ?? filter.owner;
    let scanned = 0;
    for await (const execution of this.client.workflow.list({ query: this.query(filter, caller, now) })) {
      if (++scanned > maxScanned) break;
      const thread = refOf(execution.workflowId);
      // Without tokens, a thread made under a token is not one the caller can open by its id.
      if (thread === undefined || (caller === undefined && scopeOf(thread.workflow_id) !== undefined))
        continue;
      if (ids !== undefined && !ids.has(execution.workflowId)) continue;
      if (owner !== undefined && execution.typedSearchAttributes.get(searchAttributes.owner) !== owner)
        continue;
      const listing = toListing(thread, execution);
      if (listing === undefined || !matches(listing, filter, now)) continue;
      if (filter.sub_agents === false && isSubAgent(listing, execution)) continue;
      found.push({ listing, thread });
      if (found.length >= limit) break;
    }
    return found;
  }

  /**
   * Deletes the thread, final when this returns: its workflow is terminated (its runs stop
   * where they are) and its history deletion requested. Temporal deletes the history some 30 s
   * later, or minutes under load; until then the terminated workflow reads as deleted (404) and
   * its id can be reused (see `ThreadGateway.requireExisting`). A thread that had already closed
   * cannot be terminated, so a tombstone takes its id: a run of its own, terminated at once,
   * that reads as deleted in the same way while Temporal removes the closed one.
   */
  async remove(thread: ThreadRef): Promise<void> {
    const workflowId = thread.workflow_id;
    const handle = this.client.workflow.getHandle(workflowId);
    const description = await handle.describe();
    if (description.status.name === deletedStatus) throw threadNotFound(thread.thread_id);
    if (description.status.name === 'RUNNING') {
      await handle.terminate('thread deleted').then(
        () => this.askToBeat?.(workflowId, description.raw),
        async (error: unknown) => {
          // It closed meanwhile: delete it as a closed thread.
          if (!(error instanceof WorkflowNotFoundError)) throw error;
          await this.bury(workflowId);
        },
      );
    } else {
      await this.bury(workflowId);
    }
    await this.client.workflowService.deleteWorkflowExecution({
      namespace: this.client.options.namespace,
      // This run only: the id may be reused before Temporal gets to the deletion.
      workflowExecution: { workflowId, runId: description.runId },
    });
  }

  /**
   * Marks a closed thread's id deleted: a tombstone run on a task queue no worker polls,
   * terminated before anything could run it. It carries no conversation data and is left to
   * the namespace's retention.
   */
  private async bury(workflowId: string): Promise<void> {
    const tombstone = await this.client.workflow.start(tombstoneWorkflowType, {
      workflowId,
      taskQueue: tombstoneTaskQueue,
      args: [],
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      staticSummary: 'deleted Keel thread (tombstone)',
    });
    await tombstone.terminate('thread deleted');
  }
}

/** The tombstone of a thread deleted after it had closed (see `ThreadDirectory.remove`). */
export const tombstoneWorkflowType = 'keelDeletedThread';
const tombstoneTaskQueue = 'keel-deleted-threads';

function cutoff(filter: ThreadFilter, now: number): number {
  return now - (filter.older_than_days ?? 0) * 24 * 3600 * 1000;
}

function matches(listing: ThreadListing, filter: ThreadFilter, now: number): boolean {
  if (filter.older_than_days !== undefined && Date.parse(listing.created_at) >= cutoff(filter, now))
    return false;
  return Object.entries(filter.metadata ?? {}).every(([key, value]) =>
    isDeepStrictEqual(listing.metadata[key], value),
  );
}

/**
 * A sub-agent's thread: its memo's metadata names its parent (`keel_child_of`, since the patch
 * `keel-sub-agent-memo`); one started before that has no memo, but a conversation for a parent.
 */
function isSubAgent(listing: ThreadListing, execution: WorkflowExecutionInfo): boolean {
  if (childOriginOf(listing.metadata) !== undefined) return true;
  const parent = execution.parentExecution?.workflowId;
  return typeof parent === 'string' && refOf(parent) !== undefined;
}

function toListing(thread: ThreadRef, execution: WorkflowExecutionInfo): ThreadListing | undefined {
  // A deleted thread is gone from the moment DELETE answered, though visibility still lists it.
  if (execution.status.name === deletedStatus) return undefined;
  const attributes = execution.typedSearchAttributes;
  const memo = (execution.memo ?? {}) as { metadata?: Record<string, unknown>; created_at?: string };
  const owner = attributes.get(searchAttributes.owner);
  const model = attributes.get(searchAttributes.model);
  return {
    thread_id: thread.thread_id,
    ...(owner === undefined || owner === 'local' ? {} : { owner }),
    status: (attributes.get(searchAttributes.status) ?? 'idle') as ThreadStatus,
    metadata: memo.metadata ?? {},
    ...(model === undefined ? {} : { model }),
    cost_usd: attributes.get(searchAttributes.costUsd) ?? 0,
    turns: attributes.get(searchAttributes.turns) ?? 0,
    created_at: memo.created_at ?? execution.startTime.toISOString(),
    open: execution.status.name === 'RUNNING',
  };
}
