/**
 * Sub-agents, on the interpreter's side: `startChild` starts a child conversation workflow and
 * gives it its task, then keeps the foreground wait's timer; reports are fed back as events. What
 * a report becomes is the reducer's (core/sub-agents.ts). A child reports to its parent once its
 * run ends, then closes.
 */
import {
  condition,
  getExternalWorkflowHandle,
  log,
  ParentClosePolicy,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { type ChildCompleted, childOriginOf } from '../../common/children';
import { runTerminalEvents } from '../../common/events';
import * as messages from '../../common/messages';
import { searchAttributes } from '../../common/search-attributes';
import { workflowIdFor } from '../../common/thread';
import type { ThreadState } from '../core/state';
import { childOf } from '../core/spawn';
import type { Command, EventInput } from '../core/transitions';
import type { ConversationInput } from './workflow';

export interface ChildHost {
  readonly state: ThreadState;
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
    else this.#host.dispatch({ type: 'childCompleted', report });
  }

  /**
   * Carries out one `startChild`; resolves only when the child's report has been used, so
   * continue-as-new waits for it.
   */
  async start({ child, task, wait_ms }: Extract<Command, { type: 'startChild' }>): Promise<void> {
    const childThreadId = child.thread_id;
    this.#starting.add(childThreadId);
    try {
      const input: ConversationInput = child;
      const handle = await startChild('conversationWorkflow', {
        workflowId: workflowIdFor(childThreadId),
        args: [input],
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        typedSearchAttributes: [
          { key: searchAttributes.status, value: 'idle' },
          { key: searchAttributes.owner, value: child.owner ?? 'local' },
          { key: searchAttributes.model, value: child.config.model },
        ],
      });
      await handle.signal(messages.userMessageSignal, {
        run_id: 'task',
        assistant_id: 'agent',
        content: [{ type: 'text', text: task }],
        multitask_strategy: 'enqueue',
        metadata: {},
      });
      this.#host.dispatch({ type: 'childStarted', child_thread_id: childThreadId });
      if (wait_ms > 0 && !(await condition(() => this.#reports.has(childThreadId), wait_ms)))
        this.#host.dispatch({ type: 'childWaitExpired', child_thread_id: childThreadId });
    } finally {
      this.#starting.delete(childThreadId);
    }
    const report = this.#reports.get(childThreadId);
    this.#reports.delete(childThreadId);
    if (report !== undefined) this.#host.dispatch({ type: 'childCompleted', report });
    await condition(() => childOf(this.#host.state, childThreadId) === undefined);
  }
}

/**
 * On a child's side: once its run ends, tell the parent, then close (a finished child must not
 * outlive its one task, or the parent's continue-as-new would cancel it mid-way).
 */
export function reportToParent(state: ThreadState, commands: readonly Command[], close: () => void): void {
  const origin = childOriginOf(state.thread.metadata);
  if (origin === undefined || workflowInfo().parent === undefined) return;
  for (const command of commands) {
    if (command.type !== 'emit' || !runTerminalEvents.includes(command.event.event)) continue;
    if (!('run' in command.event.data)) continue;
    const report: ChildCompleted = {
      ...origin,
      child_thread_id: state.thread.thread_id,
      run: command.event.data.run,
    };
    getExternalWorkflowHandle(workflowIdFor(origin.parent_thread_id))
      .signal(messages.childCompletedSignal, report)
      .then(close, (error: unknown) => {
        log.warn('could not report to the parent conversation', { error });
        close();
      });
  }
}
