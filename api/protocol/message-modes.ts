/**
 * LangGraph's two message stream modes: `messages-tuple` (event `messages`: `[chunk, metadata]`)
 * and the Platform's older `messages`, derived from the tuples — `messages/metadata` the first
 * time a message id is seen, then `messages/partial` with the AI message accumulated so far, or
 * `messages/complete` for a whole message (a tool result).
 */
import type { ToolUseBlock } from '../../common/transcript';
import { toToolCall, type LangChainMessage } from './langchain-messages';
import type { ProtocolEvent, ProtocolStreamMode } from './stream-modes';

/** A message as a stream carries it: a LangChain message or an AI message chunk. */
type WireMessage = { id: string; type: string; content: unknown } & Record<string, unknown>;

export class MessageModes {
  /** `messages`: each AI message accumulated from its chunks so far, by id. */
  readonly #partials = new Map<string, WireMessage>();

  constructor(
    private readonly modes: ReadonlySet<ProtocolStreamMode>,
    private readonly threadId: string,
  ) {}

  /** Whether either mode is asked for. */
  get wanted(): boolean {
    return this.modes.has('messages-tuple') || this.modes.has('messages');
  }

  /** A chunk of the model's text under `chunkId`, in the agent node at `step`. */
  chunk(text: string, chunkId: string, runId: string, node: string, step: number): ProtocolEvent[] {
    return this.send([this.tuple({ ...emptyChunk(chunkId), content: text }, runId, node, step)]);
  }

  /** A message as `messages-tuple` carries it, with the node and step it came from. */
  tuple(message: object, runId: string, node: string, step: number): ProtocolEvent {
    return {
      event: 'messages',
      data: [
        message,
        {
          run_id: runId,
          thread_id: this.threadId,
          graph_id: 'agent',
          langgraph_node: node,
          langgraph_step: step,
          tags: [],
        },
      ],
    };
  }

  /** The tuples as `messages-tuple` sends them, and/or as the older `messages` mode does. */
  send(tuples: ProtocolEvent[]): ProtocolEvent[] {
    const events = this.modes.has('messages-tuple') ? [...tuples] : [];
    if (!this.modes.has('messages')) return events;
    for (const tuple of tuples) {
      const [message, metadata] = tuple.data as [WireMessage, object];
      const held = this.#partials.get(message.id);
      if (held === undefined)
        events.push({ event: 'messages/metadata', data: { [message.id]: { metadata } } });
      if (message.type !== 'AIMessageChunk') {
        events.push({ event: 'messages/complete', data: [message] });
        continue;
      }
      const merged = accumulate(held, message);
      this.#partials.set(message.id, merged);
      events.push({ event: 'messages/partial', data: [merged] });
    }
    return events;
  }
}

/** The chunk that closes a streamed model message (`chunkId`): its tool calls and metadata, no text. */
export function closingChunk(chunkId: string, uses: readonly ToolUseBlock[], ai: LangChainMessage) {
  return {
    ...emptyChunk(chunkId),
    tool_calls: uses.map(toToolCall),
    tool_call_chunks: uses.map((use, position) => ({
      name: use.name,
      args: JSON.stringify(use.input),
      id: use.id,
      index: position,
      type: 'tool_call_chunk',
    })),
    response_metadata: ai.response_metadata,
  };
}

/** An AI message chunk as LangGraph serialises one. */
export function emptyChunk(id: string) {
  return {
    type: 'AIMessageChunk',
    id,
    content: '',
    additional_kwargs: {},
    response_metadata: {},
    name: null,
    tool_calls: [],
    invalid_tool_calls: [],
    tool_call_chunks: [],
    usage_metadata: null,
  };
}

/**
 * The AI message a `messages/partial` event carries: the chunks so far merged (text appended,
 * tool calls and metadata from the latest chunk that has them), as a whole `ai` message.
 */
function accumulate(held: WireMessage | undefined, chunk: WireMessage): WireMessage {
  const text = (message: WireMessage | undefined) =>
    typeof message?.content === 'string' ? message.content : '';
  const calls = chunk.tool_calls as unknown[] | undefined;
  const metadata = { ...(held?.response_metadata as object), ...(chunk.response_metadata as object) };
  return {
    type: 'ai',
    id: chunk.id,
    content: text(held) + text(chunk),
    additional_kwargs: {},
    response_metadata: metadata,
    name: null,
    tool_calls: calls !== undefined && calls.length > 0 ? calls : (held?.tool_calls ?? []),
    invalid_tool_calls: [],
    usage_metadata: chunk.usage_metadata ?? held?.usage_metadata ?? null,
  };
}
