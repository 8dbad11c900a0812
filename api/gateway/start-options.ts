/**
 * What a thread's workflow starts with: its id and task queue, its input, the memo, the Web UI's
 * summary and details, and the search attributes an operator filters by.
 */
import type * as messages from '../../common/messages';
import { searchAttributes } from '../../common/search-attributes';
import { summarizeThread } from '../../common/summaries';
import { textOf } from '../../common/transcript';
import type { NewConversation } from '../../workflows/interpreter/workflow';
import type { ThreadRef } from '../threads/thread-ref';

/** What the Web UI shows under a thread's workflow: who owns it and how it was configured. */
function threadDetails(conversation: NewConversation): string {
  return [
    `Keel thread \`${conversation.thread_id}\``,
    `- owner: ${conversation.owner ?? 'local'}`,
    `- model: \`${conversation.config.model}\``,
    `- created: ${conversation.created_at}`,
    '- metadata: in the memo; live status, approvals and spend: current details',
  ].join('\n');
}

/** `firstMessage`: the input a run that creates its thread brings, for the Web UI's summary. */
export function startOptions(
  taskQueue: string,
  thread: ThreadRef,
  conversation: NewConversation,
  firstMessage?: messages.SubmitInput,
) {
  return {
    workflowId: thread.workflow_id,
    taskQueue,
    args: [conversation] as [NewConversation],
    memo: { metadata: conversation.metadata, created_at: conversation.created_at },
    staticSummary: summarizeThread({
      ...conversation,
      first_message: firstMessage === undefined ? undefined : textOf(firstMessage.content),
    }),
    staticDetails: threadDetails(conversation),
    typedSearchAttributes: [
      { key: searchAttributes.status, value: 'idle' },
      { key: searchAttributes.owner, value: conversation.owner ?? 'local' },
      { key: searchAttributes.model, value: conversation.config.model },
      { key: searchAttributes.costUsd, value: 0 },
      { key: searchAttributes.turns, value: 0 },
    ],
  };
}
