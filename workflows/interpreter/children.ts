/**
 * Sub-agents, on the interpreter's side: `startChild` starts a child conversation workflow and
 * gives it its first run, then keeps the foreground wait's timer; reports are fed back as events.
 * What the child is given and what a report becomes are the reducer's (core/spawn.ts,
 * core/sub-agents.ts). A child reports to its parent once its run ends, then closes.
 */
import {
  CancellationScope,
  ChildWorkflowCancellationType,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  ParentClosePolicy,
  patched,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { ChildCompleted } from '../../common/children';
import * as messages from '../../common/messages';
import { searchAttributes } from '../../common/search-attributes';
import { scopeOf, workflowIdFor } from '../../common/thread';
import type { ThreadState } from '../core/state';
import { childOf } from '../core/spawn';
import { isLateReport } from '../core/sub-agents';
import type { Command, EventInput } from '../core/transitions';
import { lateChildReportPatch, stopReachesChildrenPatch, type Patches } from './patches';
import type { ConversationInput } from './conversation-input';

export interface ChildHost {
  readonly state: ThreadState;
  readonly patches: Patches;
  dispatch(event: EventInput): void;
}

export class ChildAgents {
  readonly #host: ChildHost;
  /** Children whose `startChild` is in flight, up to the end of its wait. */
  readonly #starting = new Set<string>();
  /**
   * Their reports, held until the wait ends: the executor hands them to the reducer after the
   * wait's timer is cancelled, the order in which the commands have always been issued.
   */
  readonly #reports = new Map<string, ChildCompleted>();

  constructor(host: ChildHost) {
    this.#host = host;
  }

  /** The `childCompleted` signal. */
  onReport(report: ChildCompleted): void {
    if (this.#starting.has(report.child_thread_id)) this.#reports.set(report.child_thread_id, report);
    else this.#report(report);
  }

  /** A report to the reducer; a late one's spend counts since the patch (asked only then). */
  #report(report: ChildCompleted): void {
    const counted = isLateReport(this.#host.state, report) && patched(lateChildReportPatch);
    this.#host.dispatch({
      type: 'childCompleted',
      report,
      ...(counted ? { late_counted: true as const } : {}),
    });
  }

  /**
   * Carries out one `startChild`; resolves only when the child's report has been used, so
   * continue-as-new waits for it. Since `stopReachesChildrenPatch`, a Stop of the run (its scope
   * cancelled) leaves the child workflow running and asks it to cancel its run instead: the child
   * then reports what it spent, as any child does, and the parent lets go of it.
   */
  async start({ child, first_run, wait_ms }: Extract<Command, { type: 'startChild' }>): Promise<void> {
    const childThreadId = child.thread_id;
    const stopReachesChild = patched(stopReachesChildrenPatch);
    this.#starting.add(childThreadId);
    let cancelChildRun: (() => Promise<void>) | undefined;
    try {
      const input: ConversationInput = child;
      const begin = async () => {
        const started = await startChild('conversationWorkflow', {
          // A child's id is scoped as its parent's is (decision 0160): the same owner's thread.
          workflowId: workflowIdFor(childThreadId, scopeOf(workflowInfo().workflowId)),
          args: [input],
          parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
          ...(stopReachesChild ? { cancellationType: ChildWorkflowCancellationType.ABANDON } : {}),
          typedSearchAttributes: [
            { key: searchAttributes.status, value: 'idle' },
            { key: searchAttributes.owner, value: child.owner ?? 'local' },
            { key: searchAttributes.model, value: child.config.model },
          ],
          // As the API starts a thread: the metadata (`keel_child_of` names the parent), so that
          // thread searches can leave sub-agents out.
          ...(this.#host.patches.askSubAgentMemo()
            ? { memo: { metadata: child.metadata, created_at: child.created_at } }
            : {}),
        });
        await started.signal(messages.userMessageSignal, first_run);
        return started;
      };
      // Since the patch a Stop that lands while the child starts waits for the start and its
      // first run: the Stop then cancels that run, rather than leaving a child with none.
      const handle = stopReachesChild ? await CancellationScope.nonCancellable(begin) : await begin();
      if (stopReachesChild)
        cancelChildRun = () =>
          CancellationScope.nonCancellable(() =>
            handle.signal(messages.cancelRunSignal, {
              run_id: first_run.run_id,
              reason: 'the run that started this sub-agent was stopped',
            }),
          );
      this.#host.dispatch({ type: 'childStarted', child_thread_id: childThreadId });
      if (wait_ms > 0 && !(await condition(() => this.#reports.has(childThreadId), wait_ms)))
        this.#host.dispatch({ type: 'childWaitExpired', child_thread_id: childThreadId });
    } catch (error) {
      this.#starting.delete(childThreadId);
      if (cancelChildRun !== undefined && isCancellation(error)) {
        // A report already held is used, not dropped with the wait.
        const held = this.#reports.get(childThreadId);
        this.#reports.delete(childThreadId);
        if (held !== undefined) this.#report(held);
        else await cancelChildRun();
      }
      throw error;
    } finally {
      this.#starting.delete(childThreadId);
    }
    const report = this.#reports.get(childThreadId);
    this.#reports.delete(childThreadId);
    if (report !== undefined) this.#report(report);
    try {
      await condition(() => childOf(this.#host.state, childThreadId) === undefined);
    } catch (error) {
      if (cancelChildRun !== undefined && isCancellation(error)) await cancelChildRun();
      throw error;
    }
  }
}

/**
 * On a child's side: the `childCompleted` signal to the parent, then `parentReported` (the
 * reducer closes the child). Only a child started by a parent workflow has one to tell.
 */
export function reportToParent(
  host: ChildHost,
  { report }: Extract<Command, { type: 'reportToParent' }>,
): void {
  if (workflowInfo().parent === undefined) return;
  getExternalWorkflowHandle(workflowIdFor(report.parent_thread_id, scopeOf(workflowInfo().workflowId)))
    .signal(messages.childCompletedSignal, report)
    .then(
      () => host.dispatch({ type: 'parentReported' }),
      (error: unknown) => {
        log.warn('could not report to the parent conversation', { error });
        host.dispatch({ type: 'parentReported' });
      },
    );
}
