/**
 * Which patched behaviour a workflow run takes (docs/replay-and-patching.md). Each `patched()`
 * call writes a marker and, with SDK 1.23's core, a `TemporalChangeVersion` search-attribute
 * upsert beside it (no worker option turns that off): two history events per patch per run. A run
 * started since `leanHistoryPatch` records that one patch and takes every earlier one without a
 * marker; a run from before it has no such marker and asks for each as it always did.
 */
import { patched } from '@temporalio/workflow';

/**
 * Since this patch a run records one marker for all of Keel's earlier patches, and writes its
 * search attributes at most once per change of what visibility holds (operator-view.ts). Every
 * Keel workflow asks for it, in the tracing interceptor, as it starts (after `tracingPerWorkerPatch`,
 * which stands for it).
 */
export const leanHistoryPatch = 'keel-lean-history';

/**
 * Since this patch a run is traced only on workers that export spans, and its spans draw their ids
 * from a random stream of their own, never from the workflow's (decision 0290), so a run replays
 * alike on a worker that traces and one that does not. It stands for
 * `leanHistoryPatch` and so for every patch before that: a run since records this marker alone.
 * Every Keel workflow asks for it first, in the tracing interceptor, as it starts.
 */
export const tracingPerWorkerPatch = 'keel-tracing-per-worker';

/**
 * The patches `leanHistoryPatch` stands for: every Keel patch before it. A patch added later is
 * not in this list and is asked with `patched()` itself: a run that began with the lean-history
 * marker but before that patch existed must not take its new branch on replay.
 */
export const foldedPatches = [
  'keel-otel-interceptors',
  'keel-continue-as-new-by-size',
  'keel-hand-over-by-growth',
  'keel-cost-attribute-per-run',
  'keel-refused-input-run',
  'keel-model-call-local',
] as const;
export type FoldedPatch = (typeof foldedPatches)[number];

/**
 * Since this patch a Stop keeps what the model had said (decision 0370): a streamed model call
 * waits for its cancellation to complete and hands back its text; and a streamed model call is
 * announced in the log (`message.started`, decision 0340) as it is scheduled, which may complete
 * a client's poll of the log in that task. Asked as the run makes its first streamed model call
 * (a waited run's local calls stream nothing and never ask, so its history holds no marker for
 * it), and kept for the run: a run that began before it never takes it.
 */
export const stopKeepsPartialPatch = 'keel-stop-keeps-partial';

/**
 * Since this patch a side-effecting tool call that Temporal gave up on by its heartbeat timeout,
 * and whose heartbeats named its worker, is followed by a `checkWorker` activity, and the call's
 * result says whether its worker stopped or a Temporal service did (decision 0412). Asked at such
 * a failure only: a run that has none records no marker.
 */
export const workerCheckPatch = 'keel-worker-checked';

/**
 * Since this patch every way a run is stopped keeps what the model had said, not only a Stop: an
 * input that interrupts the run, closing the thread, and a local (waited) model call, which now
 * waits for its cancellation to complete as a streamed one does. Asked as the run makes its first
 * local model call, or as an interrupt or a close meets a model call that hands its text back,
 * and kept for the run.
 */
export const everyStopKeepsPartialPatch = 'keel-every-stop-keeps-partial';

/**
 * Since this patch a sub-agent's child workflow starts with the memo a thread made through the API
 * has (its metadata, which names its parent in `keel_child_of`, and `created_at`), so the API can
 * leave it out of thread searches (decision 0401). Asked as the run starts its first child, and
 * kept for the run.
 */
export const subAgentMemoPatch = 'keel-sub-agent-memo';

/**
 * Since this patch a cron's fire is admitted by its owner's quota before it reaches its thread
 * (decision 0480), since a fire never passes the API's door where runs are admitted:
 * `cronRunWorkflow` runs the `admitQuotaRun` activity first. Asked as the fire starts.
 */
export const cronQuotaPatch = 'keel-cron-admits-quota';

/**
 * Since this patch an agent a workflow starts (`startAgent`, and so the Nexus door) is admitted by
 * its caller's quota before its child workflow starts (decision 0480), since it never passes the
 * API's door where runs are admitted. Asked in the caller's
 * workflow at each start.
 */
export const agentQuotaPatch = 'keel-agent-admits-quota';

/**
 * Since this patch a sub-agent's report that comes after the run that spawned it ended (a Stop, a
 * close) still counts what the child spent, on the thread and on that run, and is told on the
 * stream (`child.completed`); before, it was dropped with its spend. Asked only at such a report.
 */
export const lateChildReportPatch = 'keel-late-child-report-counted';

/**
 * Since this patch a Stop of a run reaches the sub-agents it started: the run's child workflow is
 * started with `ABANDON` as its cancellation type, so cancelling the run no longer cancels the
 * child workflow (which closed it mid-run, never reporting, and left the parent holding its
 * record); the parent signals the child to cancel its run instead, and the child reports what it
 * spent as any child does. Asked as each child starts.
 */
export const stopReachesChildrenPatch = 'keel-stop-reaches-children';

/**
 * Since this patch an A2A push notification config is sent the task when its run comes to wait on
 * an approval (`TASK_STATE_INPUT_REQUIRED`), not only when the run ends, so a receiver learns that
 * the task waits on a human (decision 0505). Asked only
 * where a run with push configs comes to such a wait: a run that has none records no marker.
 */
export const a2aPushInputRequiredPatch = 'keel-a2a-push-input-required';

/** Decided once per run, as it starts (before any handler runs), and recorded in its history. */
export class Patches {
  /** True in a run started since `leanHistoryPatch` (or `tracingPerWorkerPatch`, which stands for it). */
  readonly lean: boolean;
  #stopKeepsPartial: boolean | undefined;
  #everyStopKeepsPartial: boolean | undefined;
  #subAgentMemo: boolean | undefined;

  constructor() {
    // A missing marker on replay is not final (the run may go on live), so ask once and keep it.
    // In the order the tracing interceptor asked them, so a new run records one marker only.
    this.lean = patched(tracingPerWorkerPatch) || patched(leanHistoryPatch);
  }

  /** `stopKeepsPartialPatch`, asked once, as the run's first streamed model call is made. */
  askStopKeepsPartial(): boolean {
    this.#stopKeepsPartial ??= patched(stopKeepsPartialPatch);
    return this.#stopKeepsPartial;
  }

  /**
   * True once the run asked `stopKeepsPartialPatch` and took it: a Stop then waits for the model
   * call and keeps its text. Never asks, so a Stop and the call's end read the same answer.
   */
  get stopKeepsPartial(): boolean {
    return this.#stopKeepsPartial === true;
  }

  /** `workerCheckPatch`, asked where a tool call's heartbeat timeout named its worker. */
  askWorkerCheck(): boolean {
    return patched(workerCheckPatch);
  }

  /** `everyStopKeepsPartialPatch`, asked once, where it first decides what happens. */
  askEveryStopKeepsPartial(): boolean {
    this.#everyStopKeepsPartial ??= patched(everyStopKeepsPartialPatch);
    return this.#everyStopKeepsPartial;
  }

  /** True once the run asked `everyStopKeepsPartialPatch` and took it. Never asks. */
  get everyStopKeepsPartial(): boolean {
    return this.#everyStopKeepsPartial === true;
  }

  /**
   * True when a Stop keeps what was said: the run's model calls hand their text back when
   * cancelled (streamed ones since `stopKeepsPartialPatch`, local ones since
   * `everyStopKeepsPartialPatch`). Never asks.
   */
  get stopsKeepPartial(): boolean {
    return this.stopKeepsPartial || this.everyStopKeepsPartial;
  }

  /** `subAgentMemoPatch`, asked once, as the run starts its first child. */
  askSubAgentMemo(): boolean {
    this.#subAgentMemo ??= patched(subAgentMemoPatch);
    return this.#subAgentMemo;
  }

  /** `a2aPushInputRequiredPatch`, asked where a run with push configs comes to wait on an approval. */
  askA2aPushInputRequired(): boolean {
    return patched(a2aPushInputRequiredPatch);
  }

  /** `patched(id)` in a run from before `leanHistoryPatch`; in a run since, true without a marker. */
  folded(id: FoldedPatch): boolean {
    return this.lean || patched(id);
  }
}
