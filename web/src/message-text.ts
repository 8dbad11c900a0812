/** A message's text, whether its content is a string or a list of parts. */
import type { Message } from '@langchain/langgraph-sdk';

export function textOf(message: Message): string {
  const { content } = message;
  if (typeof content === 'string') return content;
  return content.map((part) => ('text' in part && typeof part.text === 'string' ? part.text : '')).join('');
}
