/** A message that starts a new turn (not the answer to a task's approvals): the run it asks for. */
import { randomUUID } from 'node:crypto';
import type { Message } from '@a2a-js/sdk';
import { idPattern, limits } from '../../common/limits';
import { protocolRunBody } from '../runs/run-schemas';
import { dataOf, textOf } from './decisions';
import { invalidParams, shown } from './errors';

/**
 * The thread (the context's, or a new one) and the run body of a new turn: the message's text and
 * data parts as the user's input. Throws -32602 for a message with neither, or too long, or a
 * context id that is no thread id.
 */
export function newTurnOf(message: Message, assistantId: string) {
  const text = textOf(message);
  const data = dataOf(message);
  const content = [text, data === undefined ? '' : JSON.stringify(data)]
    .filter((part) => part !== '')
    .join('\n');
  if (content === '') throw invalidParams('message.parts: a text or data part');
  if (content.length > limits.maxInputChars)
    throw invalidParams(`message: at most ${limits.maxInputChars} characters`);
  const threadId = message.contextId === '' ? randomUUID() : message.contextId;
  if (threadId.length > limits.maxIdChars || !idPattern.test(threadId))
    throw invalidParams(`message.contextId ${shown(threadId)} is not a thread id`);
  const body = protocolRunBody.parse({
    assistant_id: assistantId,
    input: { messages: [{ role: 'user', content }] },
    if_not_exists: 'create',
    metadata: { source: 'a2a', a2a_message_id: message.messageId },
  });
  return { threadId, body };
}
