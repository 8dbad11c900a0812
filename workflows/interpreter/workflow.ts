/**
 * `conversationWorkflow`: one per thread, id `conversation-<thread_id>`. It lives as long as the
 * thread, handing its state to a fresh run when Temporal suggests continue-as-new, or earlier,
 * once its history passes `handOverHistory` (see there).
 */
import {
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  isCancellation,
  workflowInfo,
} from '@temporalio/workflow';
import type { AgentFinished, ConversationTask } from '../../common/agents';
import type { ThreadSummary } from '../../common/thread';
import { type CarriedPart, joinCarried, splitCarried } from './carried';
import type { ConversationInput } from './conversation-input';
import { Conversation } from './conversation';
import { fromCarried, initialState } from '../core/state';
import { Patches } from './patches';
import { EventLog } from './stream';
import { toThread } from '../core/views';
import { agentFinished, taskDone, withEarlierMessages } from '../core/task';
import { reportTask, startTask } from './task';

export type { ConversationInput, NewConversation } from './conversation-input';

/**
 * Since this patch a conversation hands over once its history passes `handOverHistory`, not only
 * when the server suggests it (4,096 events or 4 MiB by default).
 */
export const handOverBySizePatch = 'keel-continue-as-new-by-size';

/**
 * A worker that picks a conversation up cold (its worker was killed, the cache evicted it)
 * replays the whole history within the workflow task's 10 s. At 3 MB (about 2,100 events of a
 * tool-using conversation) that took longer than 10 s on a loaded 2-core machine in a 30-minute
 * chaos soak, and the task timed out again and again: the thread answered nothing, and the model
 * call's query for its messages failed until its attempts were spent. A history this size
 * replays in well under that.
 */
export const handOverHistory = { bytes: 1024 * 1024, events: 1_500 } as const;

/**
 * Since this patch the bytes `handOverHistory` counts are those the run wrote, not the state it
 * started with: a long conversation carries ~1 MiB (transcript, runs, event log), and counting it
 * made every run hand over within a few turns (22 times in 300 turns), each hand-over writing the
 * whole state twice more. Replaying the one event that holds it costs one decode, not many events.
 */
export const handOverByGrowthPatch = 'keel-hand-over-by-growth';

export interface ConversationOutcome {
  thread_id: string;
  summary: ThreadSummary;
  /** For a task conversation: its last run and everything it spent. */
  agent?: AgentFinished;
}

export async function conversationWorkflow(
  input: ConversationInput,
  ...parts: CarriedPart[]
): Promise<ConversationOutcome> {
  // Before any command: histories from before the patch hand over only when the server suggests
  // it, on replay too.
  const patches = new Patches();
  const bySize = patches.folded(handOverBySizePatch);
  // The history's size before this run did anything: its start, with the state it carries.
  const startedBytes = patches.folded(handOverByGrowthPatch) ? workflowInfo().historySize : 0;
  const { carried: carriedInput, ...thread } = input;
  const carried = carriedInput === undefined ? undefined : joinCarried(carriedInput, parts);
  const { task } = thread;
  const stream = new EventLog(carried?.stream);
  const state =
    carried === undefined ? withEarlierMessages(initialState(thread), task) : fromCarried(carried.state);
  const conversation = new Conversation(state, stream, { patches, task: task !== undefined });
  // Re-issue what the carried state implies before handlers run: an update delivered with the
  // start (update-with-start) or buffered across continue-as-new issues its own commands, and
  // resuming after it would start the same model call twice.
  conversation.resume({ fresh: carried === undefined });
  conversation.registerHandlers();
  if (carried === undefined && task !== undefined) startTask(conversation, task);

  const handOverDue = (): boolean => {
    const info = workflowInfo();
    return (
      info.continueAsNewSuggested ||
      (bySize &&
        (info.historySize - startedBytes > handOverHistory.bytes ||
          info.historyLength > handOverHistory.events))
    );
  };
  // A thread closed while its model call was stopping (decision 0400) ends once the call has
  // handed back what it said; before that patch a close ended the active run at once.
  const done = (): boolean =>
    (conversation.state.closed && conversation.state.active === null) ||
    (task !== undefined && taskDone(conversation.state));
  try {
    // Hand off only between steps: with no activity in flight the state alone says what comes next.
    await condition(() => done() || (handOverDue() && conversation.quiescent));
  } catch (error) {
    // A task agent whose parent was cancelled ends its run (the transcript stays valid) and
    // returns what it did; other conversations are never cancelled (DELETE terminates them).
    if (task === undefined || !isCancellation(error)) throw error;
    return CancellationScope.nonCancellable(() =>
      closeTask(conversation, stream, task, 'its workflow was cancelled (by its parent, or through Nexus)'),
    );
  }
  if (task !== undefined && done()) return closeTask(conversation, stream, task, 'its task is done');
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
  const handed = splitCarried(conversation.state, stream.carriedState());
  return continueAsNew<typeof conversationWorkflow>({ ...thread, carried: handed.carried }, ...handed.parts);
}

/** Closes a task conversation (a no-op when it is closed already) and reports its result. */
async function closeTask(
  conversation: Conversation,
  stream: EventLog,
  task: ConversationTask,
  reason: string,
): Promise<ConversationOutcome> {
  conversation.dispatch({ type: 'closeRequested', reason });
  stream.detachPollers();
  conversation.releaseWaiters();
  await condition(allHandlersFinished);
  // A signal not yet sent when the workflow completes is dropped: the task's settlement with its
  // caller's quota ledger goes out first (decision 0480). Without one this waits for nothing.
  await condition(() => !conversation.settling);
  const agent = agentFinished(conversation.state);
  await reportTask(task, agent);
  return { thread_id: agent.thread_id, summary: toThread(conversation.state).summary, agent };
}
