/**
 * `conversationWorkflow`: one per thread, id `conversation-<thread_id>`. It lives as long as the
 * thread, handing its state to a fresh run when Temporal suggests continue-as-new.
 */
import { allHandlersFinished, condition, continueAsNew, workflowInfo } from '@temporalio/workflow';
import type { WorkflowStreamState } from '@temporalio/workflow-streams/workflow';
import type { ThreadSummary, ThreadConfig } from '../../common/thread';
import { Conversation } from './conversation';
import { type ThreadState, fromCarried, initialState } from '../core/state';
import { EventLog } from './stream';
import { toThread } from '../core/views';

/** What the API starts a conversation with. */
export interface NewConversation {
  thread_id: string;
  owner?: string;
  metadata: Record<string, unknown>;
  config: ThreadConfig;
  created_at: string;
}

export interface ConversationInput extends NewConversation {
  /** Present when this run continues an earlier one. */
  carried?: { state: ThreadState; stream: WorkflowStreamState };
}

export interface ConversationOutcome {
  thread_id: string;
  summary: ThreadSummary;
}

export async function conversationWorkflow(input: ConversationInput): Promise<ConversationOutcome> {
  const { carried, ...thread } = input;
  const stream = new EventLog(carried?.stream);
  const state = carried === undefined ? initialState(thread) : fromCarried(carried.state);
  const conversation = new Conversation(state, stream);
  // Re-issue what the carried state implies before handlers run: an update delivered with the
  // start (update-with-start) or buffered across continue-as-new issues its own commands, and
  // resuming after it would start the same model call twice.
  conversation.resume();
  conversation.registerHandlers();

  // Hand off only between steps: with no activity in flight the state alone says what comes next.
  await condition(
    () => conversation.state.closed || (workflowInfo().continueAsNewSuggested && conversation.quiescent),
  );
  // Either way, release waiting stream subscribers and run waiters first: they would otherwise
  // hold allHandlersFinished open until the next event, which may never come.
  stream.detachPollers();
  conversation.releaseWaiters();
  if (conversation.state.closed) {
    await condition(allHandlersFinished);
    return { thread_id: thread.thread_id, summary: toThread(conversation.state).summary };
  }
  conversation.beginDraining();
  await condition(allHandlersFinished);
  return continueAsNew<typeof conversationWorkflow>({
    ...thread,
    carried: { state: conversation.state, stream: stream.carriedState() },
  });
}
