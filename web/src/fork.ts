/**
 * "Edit and regenerate": the checkpoint a message was sent from, which a run names to go on from
 * there (docs/decisions/0097-forks-keep-the-branch-they-leave.md). A checkpoint's id is the id of
 * the step's last canonical message (`m7`); the LangChain messages made from one canonical
 * message are `m7`, `m7.1`, … (decision 0090), so the message before says where its step ended.
 */
import type { Message } from '@langchain/langgraph-sdk';

/** The checkpoint just before `messages[index]`: `start` for the thread's first message. */
export function checkpointBefore(messages: readonly Message[], index: number): string | undefined {
  if (index === 0) return 'start';
  const id = messages[index - 1]?.id;
  return id === undefined ? undefined : id.split('.')[0];
}
