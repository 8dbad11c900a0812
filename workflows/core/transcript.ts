/**
 * Transcript operations. Messages enter only through `appendMessages`, and an assistant message
 * that asks for tools only ever enters together with the user message that answers it.
 */
import { limits, truncateWithNote } from '../../common/limits';
import type {
  AssistantContent,
  AssistantMessage,
  Message,
  ModelMessage,
  StopReason,
  ToolResultBlock,
  UserContent,
  UserMessage,
} from '../../common/transcript';
import { withoutOrphans } from './branches';
import { iso } from './emit';
import { revised, type ThreadState } from './state';

type NewMessage =
  | { role: 'user'; content: UserContent[] }
  | {
      role: 'assistant';
      content: AssistantContent[];
      model: string;
      stop_reason: StopReason;
      stopped?: true;
    };

/** Gives each message an id and the run's metadata, appends them, and compacts if needed. */
export function appendMessages(
  state: ThreadState,
  runId: string,
  now: number,
  messages: NewMessage[],
): { state: ThreadState; appended: Message[] } {
  let sequence = state.next_sequence;
  const createdAt = iso(now);
  const appended = messages.map((message): Message =>
    message.role === 'user'
      ? ({ ...message, id: `m${sequence++}`, run_id: runId, created_at: createdAt } satisfies UserMessage)
      : ({
          ...message,
          id: `m${sequence++}`,
          run_id: runId,
          created_at: createdAt,
        } satisfies AssistantMessage),
  );
  // The transcript's size grows by the appended messages' own: no need to serialize it all again.
  const chars =
    charsOf(state) + appended.reduce((sum, message) => sum + JSON.stringify(message).length + 1, 0);
  const next = {
    ...state,
    transcript: [...state.transcript, ...appended],
    next_sequence: sequence,
    transcript_chars: chars,
  };
  return { state: compact(next), appended };
}

/** Keeps a tool result small enough for the transcript, saying what was cut. */
export function boundedToolResult(toolUseId: string, content: string, isError: boolean): ToolResultBlock {
  const block: ToolResultBlock = {
    type: 'tool_result',
    tool_use_id: toolUseId,
    content: truncateWithNote(content, limits.toolResultChars),
  };
  return isError ? { ...block, is_error: true } : block;
}

/** Marks a message Keel wrote for people (a run's failure), which models never see. */
export function isNotice(message: Message): boolean {
  return message.role === 'assistant' && message.model === 'keel';
}

/** The transcript as the model sees it: notices dropped, a note where older turns were compacted. */
export function modelMessages(state: ThreadState): ModelMessage[] {
  const messages: ModelMessage[] = state.transcript
    .filter((message) => !isNotice(message))
    .map((message) =>
      message.role === 'user'
        ? { role: 'user' as const, content: message.content }
        : { role: 'assistant' as const, content: message.content },
    );
  if (state.compacted_messages > 0) {
    const note = `[Keel: ${state.compacted_messages} earlier messages of this conversation were compacted away.]`;
    messages.unshift({ role: 'user', content: [{ type: 'text', text: note }] });
  }
  return messages;
}

function sizeOf(messages: readonly Message[]): number {
  return JSON.stringify(messages).length;
}

/**
 * `sizeOf(state.transcript)`, from the count the state keeps when it has one: each message's
 * JSON and a separator, plus the brackets less one separator, which is the same number for any
 * non-empty transcript (and 1 for an empty one, where sizeOf says 2: both far under any limit).
 */
function charsOf(state: ThreadState): number {
  return state.transcript_chars ?? countedChars(state.transcript);
}

function countedChars(transcript: readonly Message[]): number {
  return sizeOf(transcript) - (transcript.length === 0 ? 1 : 0);
}

/** A user message that starts a run: a safe place for the transcript to begin. */
function startsRun(message: Message): boolean {
  return message.role === 'user' && message.content.every((block) => block.type === 'text');
}

/**
 * Bounds the transcript. First whole earlier runs are dropped from the front (so no tool_result
 * loses its tool_use); if one run alone is still too large, the oldest tool outputs are elided.
 */
export function compact(state: ThreadState): ThreadState {
  if (charsOf(state) <= limits.transcriptChars) return state;
  const target = Math.floor(limits.transcriptChars * 0.7);
  let transcript = state.transcript;
  let dropped = 0;
  while (sizeOf(transcript) > target) {
    const nextStart = transcript.findIndex((message, index) => index > 0 && startsRun(message));
    if (nextStart === -1) break;
    dropped += nextStart;
    transcript = transcript.slice(nextStart);
  }
  for (let index = 0; index < transcript.length && sizeOf(transcript) > target; index++) {
    const message = transcript[index];
    if (message?.role !== 'user' || startsRun(message)) continue;
    const content = message.content.map((block) =>
      block.type === 'tool_result' && block.content.length > 200
        ? {
            ...block,
            content: `[output elided by Keel to bound the transcript; it was ${block.content.length} characters]`,
          }
        : block,
    );
    transcript = [...transcript.slice(0, index), { ...message, content }, ...transcript.slice(index + 1)];
  }
  const compacted = state.compacted_messages + dropped;
  // Branches hanging off messages compacted away go with them.
  const branches =
    state.branches === undefined ? {} : { branches: withoutOrphans(transcript, state.branches, compacted) };
  return {
    ...revised(state),
    transcript,
    compacted_messages: compacted,
    transcript_chars: countedChars(transcript),
    ...branches,
  };
}
