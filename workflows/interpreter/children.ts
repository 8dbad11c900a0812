/**
 * Sub-agents, on the interpreter's side: `spawn_agent` starts a child conversation workflow
 * instead of a tool activity. Foreground calls wait up to their timeout; after that (or at once
 * for background calls) the tool result says the child goes on, and its `childCompleted` signal
 * later becomes a continuation run. A child reports to its parent once its run ends, then closes.
 */
import {
  condition,
  getExternalWorkflowHandle,
  log,
  ParentClosePolicy,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import {
  type ChildCompleted,
  childOriginOf,
  defaultChildTimeoutS,
  type ChildOrigin,
  type SpawnAgentInput,
} from '../../common/children';
import type { KeelEvent } from '../../common/events';
import * as messages from '../../common/messages';
import { runTerminalEvents } from '../../common/events';
import type { Run } from '../../common/run';
import { searchAttributes } from '../../common/search-attributes';
import { workflowIdFor } from '../../common/thread';
import type { ToolOutcome } from '../../common/tools';
import type { ConversationInput } from './workflow';
import type { ConversationState } from '../core/state';
import type { Command, EventInput } from '../core/transitions';

export interface ChildHost {
  state(): ConversationState;
  dispatch(event: EventInput): void;
  publish(event: KeelEvent): void;
}

function spawnInput(input: Record<string, unknown>): SpawnAgentInput {
  return {
    task: typeof input.task === 'string' ? input.task : '',
    ...(input.background === true ? { background: true } : {}),
    ...(typeof input.timeout_s === 'number' ? { timeout_s: input.timeout_s } : {}),
  };
}

function answerOf(run: Run): string {
  return run.output ?? run.error?.message ?? '(no answer)';
}

export class ChildAgents {
  readonly #host: ChildHost;
  /** Finished children, by child thread id. */
  readonly #completed = new Map<string, ChildCompleted>();
  /** Children whose tool call has already been answered: their result becomes a continuation run. */
  readonly #background = new Set<string>();

  constructor(host: ChildHost) {
    this.#host = host;
  }

  /** Carries out one `spawn_agent` call; resolves only when the child has reported (so continue-as-new waits). */
  async spawn(command: Extract<Command, { type: 'runTool' }>): Promise<void> {
    const { run_id, use } = command;
    const input = spawnInput(use.input);
    const thread = this.#host.state().thread;
    const finish = (outcome: ToolOutcome) =>
      this.#host.dispatch({ type: 'toolFinished', run_id, tool_use_id: use.id, outcome });
    if (input.task === '') return finish({ is_error: true, content: 'spawn_agent needs a non-empty task' });
    const childThreadId = `${thread.thread_id}.${use.id}`;
    const origin: ChildOrigin = {
      parent_thread_id: thread.thread_id,
      parent_run_id: run_id,
      tool_use_id: use.id,
      task: input.task,
    };
    const child: ConversationInput = {
      thread_id: childThreadId,
      ...(thread.owner === undefined ? {} : { owner: thread.owner }),
      metadata: { keel_child_of: origin },
      config: thread.config,
      created_at: new Date().toISOString(),
    };
    const handle = await startChild('conversationWorkflow', {
      workflowId: workflowIdFor(childThreadId),
      args: [child],
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      typedSearchAttributes: [
        { key: searchAttributes.status, value: 'idle' },
        { key: searchAttributes.owner, value: thread.owner ?? 'local' },
        { key: searchAttributes.model, value: thread.config.model },
      ],
    });
    await handle.signal(messages.userMessageSignal, {
      run_id: 'task',
      assistant_id: 'agent',
      content: [{ type: 'text', text: input.task }],
      multitask_strategy: 'enqueue',
      metadata: {},
    });
    this.#host.publish({
      event: 'child.spawned',
      data: { run_id, child_thread_id: childThreadId, task: input.task },
    });
    const timeoutS = input.background === true ? 0 : (input.timeout_s ?? defaultChildTimeoutS);
    const done = timeoutS > 0 && (await condition(() => this.#completed.has(childThreadId), timeoutS * 1000));
    if (done) {
      const report = this.#completed.get(childThreadId)!;
      this.#rollUp(report, run_id);
      finish({
        is_error: report.run.status !== 'completed',
        content: `Sub-agent ${childThreadId} ${report.run.status}: ${answerOf(report.run)}`,
      });
      return;
    }
    this.#background.add(childThreadId);
    finish({
      is_error: false,
      content:
        input.background === true
          ? `Sub-agent ${childThreadId} started in the background; its result will arrive as a new turn.`
          : `Sub-agent ${childThreadId} did not finish within ${timeoutS} s; it continues in the background and its result will arrive as a new turn.`,
    });
    await condition(() => this.#completed.has(childThreadId));
  }

  /** The `childCompleted` signal. */
  onCompleted(report: ChildCompleted): void {
    if (this.#completed.has(report.child_thread_id)) return;
    this.#completed.set(report.child_thread_id, report);
    if (!this.#background.has(report.child_thread_id)) return;
    const continuation = `${report.parent_run_id}.${report.tool_use_id}`;
    this.#rollUp(report, report.parent_run_id);
    this.#host.dispatch({
      type: 'inputSubmitted',
      input: {
        run_id: continuation,
        assistant_id: 'agent',
        content: [
          {
            type: 'text',
            text:
              `Sub-agent ${report.child_thread_id} finished the task "${report.task}" (${report.run.status}). ` +
              `Its answer: ${answerOf(report.run)}`,
          },
        ],
        multitask_strategy: 'enqueue',
        metadata: { child_thread_id: report.child_thread_id },
        continuation_of: report.parent_run_id,
      },
    });
  }

  #rollUp(report: ChildCompleted, runId: string): void {
    this.#host.publish({
      event: 'child.completed',
      data: { run_id: runId, child_thread_id: report.child_thread_id, status: report.run.status },
    });
    this.#host.dispatch({ type: 'childUsageReported', run_id: runId, usage: report.run.usage });
  }
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
