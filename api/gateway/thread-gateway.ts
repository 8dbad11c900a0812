/**
 * The API's one door to the conversation workflows: each thread is one (`conversation-<thread_id>`),
 * runs are `submitInput` updates, reads are queries. Only api/gateway/ holds their handles: this
 * module asks (queries under a deadline, updates, signals, descriptions, starts), and
 * run-intake.ts beside it hands input over, by update then by signal. The feature services
 * (threads/, runs/) decide what to ask; finding threads across the namespace is the thread
 * directory's (threads/thread-directory.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, QueryDefinition, SignalDefinition, UpdateDefinition } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';
import { temporal } from '@temporalio/proto';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import type { DecideApprovalInput } from '../../common/approvals';
import * as messages from '../../common/messages';
import type { Run } from '../../common/run';
import { searchAttributes } from '../../common/search-attributes';
import { ThreadStatus } from '../../common/thread';
import type { Message } from '../../common/transcript';
import type { KeelConfig } from '../../platform/config';
import type { Carried, CarriedPart } from '../../workflows/interpreter/carried';
import type { NewConversation, conversationWorkflow } from '../../workflows/interpreter/workflow';
import { ApiError, threadNotFound } from '../errors';
import type { ThreadRef } from '../threads/thread-ref';
import { isStall } from './intake';
import { startOptions } from './start-options';
import { TranscriptReader } from './transcript-reader';

export interface ReadOptions {
  /**
   * Until when (ms since the epoch) the thread's answer is awaited when its worker is slow or
   * away, instead of the read timeout: for a caller that waits anyway, as a `runs/wait` whose run
   * is over does for its values. A worker too busy to answer within the read timeout (a loaded
   * machine) is no reason to fail a run that completed. Never shorter than the read timeout.
   */
  until?: number;
}

/** What the gateway needs of the configuration. */
export type GatewayConfig = Pick<KeelConfig, 'taskQueue'> & {
  api: Pick<KeelConfig['api'], 'intakeWaitMs' | 'readTimeoutMs'>;
};

/** Between asks of a thread whose task a worker holds (see `read`). */
const heldQueryPauseMs = 100;
/** The last ask after a held task ended has at least this long. */
const heldQueryLastMs = 500;

/** How long a deferral is still tried after its caller was answered (a cosmetic mark). */
const deferralWithinMs = 15_000;

/** A conversation workflow in this state is a deleted thread (only DELETE terminates one). */
export const deletedStatus = 'TERMINATED';

/** A protobuf timestamp or duration in milliseconds. */
function protoMs(
  value: { seconds?: number | { toNumber(): number } | null; nanos?: number | null } | null | undefined,
): number | undefined {
  if (value === null || value === undefined) return undefined;
  const seconds = value.seconds ?? 0;
  return (typeof seconds === 'number' ? seconds : seconds.toNumber()) * 1000 + (value.nanos ?? 0) / 1e6;
}

export type Description = Awaited<ReturnType<ReturnType<Client['workflow']['getHandle']>['describe']>>;

export class ThreadGateway {
  readonly #transcripts = new TranscriptReader();

  constructor(
    /** For the calls not yet through the gateway: listings, streams, schedules (decision 0525). */
    readonly client: Client,
    readonly config: GatewayConfig,
  ) {}

  /** The thread's workflow. Only api/gateway/ calls it: features ask through the methods below. */
  handle(thread: ThreadRef) {
    return this.client.workflow.getHandle<typeof conversationWorkflow>(thread.workflow_id);
  }

  /** A query of the thread's workflow, unbounded: pass it to `read` for the read deadline. */
  query<Ret, Args extends unknown[]>(
    thread: ThreadRef,
    definition: QueryDefinition<Ret, Args>,
    ...args: Args
  ): Promise<Ret> {
    return this.handle(thread).query(definition, ...args);
  }

  /** An update of the thread's workflow, answered when the thread completed it. */
  update<Ret, Args extends [unknown, ...unknown[]]>(
    thread: ThreadRef,
    definition: UpdateDefinition<Ret, Args>,
    ...args: Args
  ): Promise<Ret> {
    return this.handle(thread).executeUpdate(definition, { args });
  }

  /** A signal to the thread's workflow: in its history once this resolves, worker or not. */
  signal<Args extends unknown[]>(
    thread: ThreadRef,
    definition: SignalDefinition<Args>,
    ...args: Args
  ): Promise<void> {
    return this.handle(thread).signal(definition, ...args);
  }

  /** The workflow's description: the server answers it from the workflow's state, with no worker. */
  describe(thread: ThreadRef): Promise<Description> {
    return this.handle(thread).describe();
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
      const heldUntil = Math.max(Date.now() + (await this.taskHeldFor(thread).catch(() => 0)), until ?? 0);
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

  /**
   * How long a worker may still hold the thread's workflow task (0 when none does): a waiting
   * run's first model call is made inside the task that accepts its input (a local activity), so
   * the thread's answer comes when that call ends — at most the task's timeout, after which the
   * worker reports the task and the acceptance with it, or is dead and the input goes by signal.
   */
  async taskHeldFor(thread: ThreadRef): Promise<number> {
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

  /**
   * 404 for a thread that does not exist or was deleted. Temporal removes a deleted workflow's
   * history some 30 s after it was asked to; DELETE terminates the workflow first, so a
   * terminated workflow is a deleted thread from the moment DELETE answers (see threads/thread-directory.ts).
   */
  async requireExisting(thread: ThreadRef): Promise<void> {
    const description = await this.describe(thread);
    if (description.status.name === deletedStatus) throw threadNotFound(thread.thread_id);
  }

  /**
   * Starts a new thread's workflow. A closed thread keeps its id; a deleted (terminated) one
   * frees it at once.
   */
  async startThread(thread: ThreadRef, conversation: NewConversation): Promise<void> {
    await this.client.workflow.start('conversationWorkflow', {
      ...startOptions(this.config.taskQueue, thread, conversation),
      workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
    });
  }

  /** Starts a copy's workflow from the source's state (through the continue-as-new input). */
  async startCopy(
    thread: ThreadRef,
    created: NewConversation,
    copy: Extract<messages.ThreadCopy, { busy: false }>,
  ): Promise<void> {
    await this.client.workflow.start<typeof conversationWorkflow>('conversationWorkflow', {
      ...startOptions(this.config.taskQueue, thread, created),
      args: [{ ...created, carried: copy.carried as unknown as Carried }, ...(copy.parts as CarriedPart[])],
    });
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
      (await this.taskHeldFor(thread).catch(() => 0)) > 0
    )
      // The thread records it once its task ends; the caller hears now what it will say.
      return { ...known, status: 'deferred' as const };
    return known;
  }

  /** Whether the thread's history (its current run) holds an `approval` signal for this approval. */
  async approvalSignaled(thread: ThreadRef, approvalId: string): Promise<boolean> {
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

  /** How many of the thread's messages this API holds already (a waited run's answer brings the rest). */
  transcriptKeptAfter(thread: ThreadRef): number {
    return this.#transcripts.keptAfter(thread.workflow_id);
  }

  /** The whole transcript from what this API holds and a page a waited run's answer carried. */
  transcriptWithPage(thread: ThreadRef, after: number, page: messages.TranscriptPage): Message[] | undefined {
    return this.#transcripts.withPage(thread.workflow_id, after, page);
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
