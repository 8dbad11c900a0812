/**
 * The canonical transcript: Anthropic-shaped content blocks, whatever provider produced them.
 * Providers convert to and from this form at the activity boundary.
 */

export interface TextBlock {
  type: 'text';
  text: string;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error?: boolean;
}

export type UserContent = TextBlock | ToolResultBlock;
export type AssistantContent = TextBlock | ToolUseBlock;

/** Why the model stopped; the union of what every provider reports, mapped to Anthropic's names. */
export const StopReason = {
  endTurn: 'end_turn',
  toolUse: 'tool_use',
  maxTokens: 'max_tokens',
  stopSequence: 'stop_sequence',
  pauseTurn: 'pause_turn',
  refusal: 'refusal',
} as const;
export type StopReason = (typeof StopReason)[keyof typeof StopReason];

interface MessageMeta {
  /** Stable id within the thread (`m<sequence>`). */
  id: string;
  /** The run that added this message. */
  run_id: string;
  created_at: string;
}

export interface UserMessage extends MessageMeta {
  role: 'user';
  content: UserContent[];
}

export interface AssistantMessage extends MessageMeta {
  role: 'assistant';
  content: AssistantContent[];
  model: string;
  stop_reason: StopReason;
  /**
   * Set when the run was stopped while this answer streamed: the message keeps the text received
   * until then (never a tool call), and clients show it as stopped.
   */
  stopped?: true;
}

export type Message = UserMessage | AssistantMessage;

/**
 * Messages a fork cut off the transcript, kept so the earlier branch can still be read: they
 * followed the checkpoint `parent` (a message id that ends a committed step, or `start`).
 */
export interface Branch {
  parent: string;
  messages: Message[];
}

/** The sequence number N of a message id `mN` (the N-th message ever appended to the thread). */
export function sequenceOf(id: string): number | undefined {
  const match = /^m(\d+)$/.exec(id);
  return match === null ? undefined : Number(match[1]);
}

/**
 * Whether a message ends a committed step: every message does except an assistant message asking
 * for tools, which commits together with the results that follow it (the transcript invariant).
 */
export function endsStep(message: Message): boolean {
  return message.role === 'user' || toolUsesOf(message.content).length === 0;
}

/** A message as a model sees it: no Keel metadata. */
export type ModelMessage =
  { role: 'user'; content: UserContent[] } | { role: 'assistant'; content: AssistantContent[] };

/** The text of a message's text blocks, joined. */
export function textOf(content: ReadonlyArray<UserContent | AssistantContent>): string {
  return content
    .filter((block): block is TextBlock => block.type === 'text')
    .map((block) => block.text)
    .join('');
}

export function toolUsesOf(content: ReadonlyArray<AssistantContent>): ToolUseBlock[] {
  return content.filter((block): block is ToolUseBlock => block.type === 'tool_use');
}

/**
 * Checks the rule every model API enforces: each assistant `tool_use` is answered by a
 * `tool_result` for its id in the very next message, which is a user message, and no
 * `tool_result` answers anything else. Returns a description of the first violation.
 */
export function findTranscriptViolation(messages: ReadonlyArray<ModelMessage>): string | undefined {
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    const next = messages[index + 1];
    if (message.role === 'assistant') {
      const ids = toolUsesOf(message.content).map((block) => block.id);
      if (ids.length === 0) continue;
      const answered = new Set(
        next?.role === 'user'
          ? next.content
              .filter((b): b is ToolResultBlock => b.type === 'tool_result')
              .map((b) => b.tool_use_id)
          : [],
      );
      const missing = ids.filter((id) => !answered.has(id));
      if (missing.length > 0) return `message ${index}: tool_use without tool_result: ${missing.join(', ')}`;
    } else {
      const previous = messages[index - 1];
      const asked = new Set(
        previous?.role === 'assistant' ? toolUsesOf(previous.content).map((b) => b.id) : [],
      );
      for (const block of message.content) {
        if (block.type === 'tool_result' && !asked.has(block.tool_use_id)) {
          return `message ${index}: tool_result for unknown tool_use ${block.tool_use_id}`;
        }
      }
    }
  }
  return undefined;
}
