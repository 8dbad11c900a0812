/**
 * Sub-agents, on the interpreter's side: `startChild` starts a child conversation workflow and
 * gives it its task, then keeps the foreground wait's timer. What a child's report becomes is the
 * reducer's (core/sub-agents.ts). A child reports to its parent once its run ends, then closes.
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
import type { ConversationState } from '../core/state';
import { childOf } from '../core/spawn';
import type { Command, EventInput } from '../core/transitions';
import type { ConversationInput } from './workflow';

export interface ChildHost {
  readonly state: ConversationState;
  dispatch(event: EventInput): void;
}

/**
 * Carries out one `startChild`; resolves only when the child's report has been used, so
 * continue-as-new waits for it.
 */
export async function startChildAgent(
  host: ChildHost,
  { child, task, wait_ms }: Extract<Command, { type: 'startChild' }>,
): Promise<void> {
  const childThreadId = child.thread_id;
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
  host.dispatch({ type: 'childStarted', child_thread_id: childThreadId });
  const phase = () => childOf(host.state, childThreadId)?.phase;
  if (wait_ms > 0 && !(await condition(() => phase() !== 'waiting', wait_ms)))
    host.dispatch({ type: 'childWaitExpired', child_thread_id: childThreadId });
  await condition(() => phase() === undefined);
}

/**
 * On a child's side: once its run ends, tell the parent, then close (a finished child must not
 * outlive its one task, or the parent's continue-as-new would cancel it mid-way).
 */
export function reportToParent(
  state: ConversationState,
  commands: readonly Command[],
  close: () => void,
): void {
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
