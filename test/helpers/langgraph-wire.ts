/** LangGraph's messages as its SDK sends and reads them, for the tests that drive Keel through it. */

/** A message in a thread's `values`, as LangGraph's SDK reads it. */
export interface WireMessage {
  type: string;
  id?: string;
  content: unknown;
  tool_calls?: Array<{ name: string; args: Record<string, unknown>; id: string; type: string }>;
  tool_call_id?: string;
}

/** A run's input of one human message. */
export const human = (content: string) => ({ messages: [{ type: 'human', content }] });

/** The messages of a thread's `values`. */
export const messagesOf = (values: unknown): WireMessage[] =>
  (values as { messages: WireMessage[] }).messages;

/** The types of a thread's messages, in order (none where `values` holds no messages yet). */
export const typesOf = (values: unknown): string[] =>
  ((values as { messages?: WireMessage[] }).messages ?? []).map((message) => message.type);
