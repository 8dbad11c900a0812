/**
 * A conversation started as another workflow's agent (`ConversationInput.task`), decided: the
 * caller's earlier messages start its transcript, it is done once no run is left, and what it
 * amounted to is its last run and the thread's spend. The interpreter (interpreter/task.ts)
 * submits the task and reports the result.
 */
import type { AgentFinished, ConversationTask } from '../../common/agents';
import { isTerminal } from '../../common/run';
import { toolUsesOf } from '../../common/transcript';
import type { ThreadState } from './state';
import { appendMessages } from './transcript';

/** Messages a task conversation starts with, before its first run (`AgentInput.messages`). */
export const earlierRunId = 'earlier';

/**
 * A new task conversation's state: the caller's earlier messages already in its transcript, as
 * the model gave them (the assistant's are marked with the agent's model).
 */
export function withEarlierMessages(state: ThreadState, task: ConversationTask | undefined): ThreadState {
  const earlier = task?.earlier ?? [];
  if (earlier.length === 0) return state;
  const model = state.thread.config.model;
  const messages = earlier.map((message) =>
    message.role === 'user'
      ? message
      : {
          ...message,
          model,
          stop_reason: toolUsesOf(message.content).length > 0 ? ('tool_use' as const) : ('end_turn' as const),
        },
  );
  return appendMessages(state, earlierRunId, Date.parse(state.thread.created_at), messages).state;
}

/** True once the task's run, and every run after it, has ended. */
export function taskDone(state: ThreadState): boolean {
  return (
    state.runs.length > 0 &&
    state.active === null &&
    state.queue.length === 0 &&
    state.runs.every((run) => isTerminal(run.status))
  );
}

/**
 * The last run and the whole thread's spend. A message that reached the agent after it closed
 * was refused (failed, `thread_closed`): it says nothing of what the agent did. A run the close
 * itself cancelled (`cancel()` while a message was under way or queued) does: the agent was
 * cancelled.
 */
export function agentFinished(state: ThreadState): AgentFinished {
  const last = state.runs.findLast(
    (run) => !(run.status === 'failed' && run.status_reason === 'thread_closed'),
  );
  return {
    thread_id: state.thread.thread_id,
    status: last?.status ?? 'cancelled',
    ...(last?.status_reason === undefined ? {} : { status_reason: last.status_reason }),
    ...(last?.output === undefined ? {} : { output: last.output }),
    ...(last?.error === undefined ? {} : { error: last.error }),
    usage: state.usage,
    runs: state.totals.runs,
  };
}
