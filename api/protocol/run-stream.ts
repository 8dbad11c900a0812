/**
 * Keel's durable events translated into LangGraph's stream modes, one Keel event at a time
 * (docs/decisions/0091-stream-modes.md):
 *
 * - `values`: the thread's messages after each committed step (a run's input, a tool call with
 *   its results, an answer), read from the transcript through that step, so a replay shows
 *   each step as it was then;
 * - `messages-tuple` (event `messages`): `[chunk, metadata]`, the model's text as AI message
 *   chunks, then a closing chunk with its tool calls, then each tool result as a tool message;
 * - `updates`: `{agent: {messages}}` and `{tools: {messages}}` per step;
 * - `custom`: Keel's own events (tools, usage, approvals, budgets, children) as
 *   `{event, data}` in Keel's native names;
 * - `error` whenever a run fails, whatever the modes.
 */
import type { KeelEvent } from '../../common/events';
import type { AssistantMessage, Message } from '../../common/transcript';
import { sequenceOf, toolUsesOf } from '../../common/transcript';
import {
  agentNode,
  commitUnits,
  messagesThroughStep,
  threadCheckpoints,
  toolsNode,
  type CheckpointRef,
  type ThreadState,
} from './checkpoints';
import type { PendingApproval } from '../../common/approvals';
import { toInterrupt } from './interrupts';
import { toAiMessage, toLangChainMessages, toToolCall, type LangChainMessage } from './langchain-messages';
import type { ProtocolStreamMode } from './stream-modes';

export interface ProtocolEvent {
  event: string;
  data: unknown;
}

/** Keel events that travel as `custom` events. */
const customEvents: ReadonlySet<KeelEvent['event']> = new Set([
  'tool.started',
  'tool.completed',
  'usage.updated',
  'approval.requested',
  'approval.resolved',
  'budget.warning',
  'budget.exceeded',
  'child.spawned',
  'child.completed',
]);

/** The id of the AI message chunks a model call streams (one per attempt: a retry starts afresh). */
export const chunkIdOf = (runId: string, step: number, attempt: number): string =>
  `run-${runId}-step-${step}-attempt-${attempt}`;

export class ProtocolTranslator {
  #transcript: Message[] = [];
  /** Set once an approval this stream announced was still pending: the stream ends there. */
  interrupted = false;
  /** Per run, the chunk id of the model call whose text is streaming now. */
  readonly #streaming = new Map<string, { id: string; step: number }>();

  constructor(
    private readonly modes: ReadonlySet<ProtocolStreamMode>,
    private readonly threadId: string,
    /** The transcript, or with `after` only the messages after the first `after` ever appended. */
    private readonly readTranscript: (after?: number) => Promise<Message[]>,
    /** The thread's pending approvals now. */
    private readonly readPending: () => Promise<PendingApproval[]> = () => Promise.resolve([]),
  ) {}

  async translate(keelEvent: KeelEvent): Promise<ProtocolEvent[]> {
    if (keelEvent.event === 'approval.requested')
      return this.#approvalRequested(keelEvent.data.approval_id, keelEvent);
    if (customEvents.has(keelEvent.event))
      return this.#when('custom', () => [{ event: 'custom', data: keelEvent }]);
    switch (keelEvent.event) {
      case 'run.started': {
        // A fork cut the transcript back: what this stream read before may be an earlier branch now.
        if (keelEvent.data.run.checkpoint_id !== undefined) this.#transcript = [];
        const first = (await this.#messagesOf(keelEvent.data.run.run_id))[0];
        return first === undefined ? [] : this.#values(first.id);
      }
      case 'message.delta': {
        const { run_id, step, attempt, text } = keelEvent.data;
        const id = chunkIdOf(run_id, step, attempt);
        this.#streaming.set(run_id, { id, step });
        return this.#when('messages-tuple', () => [
          this.#tuple({ ...emptyChunk(id), content: text }, run_id, agentNode, step),
        ]);
      }
      case 'message.completed': {
        const { message, run_id } = keelEvent.data;
        return message.role === 'assistant' ? this.#completed(message, run_id) : [];
      }
      case 'run.failed': {
        const { run } = keelEvent.data;
        const last = (await this.#messagesOf(run.run_id)).at(-1);
        // The failure notice Keel appends is a step of its own.
        const notice = last?.role === 'assistant' && last.model === 'keel' ? await this.#values(last.id) : [];
        return [
          ...notice,
          {
            event: 'error',
            data: { error: run.error?.type ?? 'RunFailed', message: run.error?.message ?? 'the run failed' },
          },
        ];
      }
      default:
        return [];
    }
  }

  /**
   * An approval still pending is an interrupt: `values` with `__interrupt__` (and `updates`
   * `{__interrupt__}`), after which the stream ends. One already decided (a replay) is only the
   * custom event it always was.
   */
  async #approvalRequested(approvalId: string, keelEvent: KeelEvent): Promise<ProtocolEvent[]> {
    const custom = this.#when('custom', () => [{ event: 'custom', data: keelEvent }]);
    const pending = await this.readPending();
    if (!pending.some((approval) => approval.approval_id === approvalId)) return custom;
    await this.#catchUp();
    const interrupts = pending.map(toInterrupt);
    this.interrupted = true;
    return [
      ...custom,
      ...this.#when('updates', () => [{ event: 'updates', data: { __interrupt__: interrupts } }]),
      ...this.#when('values', () => [
        {
          event: 'values',
          data: { messages: toLangChainMessages(this.#transcript), __interrupt__: interrupts },
        },
      ]),
    ];
  }

  /** The values of the thread through the run's last message, for a run whose events are gone. */
  async finalValues(runId: string): Promise<ProtocolEvent[]> {
    const last = (await this.#messagesOf(runId)).at(-1);
    return last === undefined ? [] : this.#values(last.id);
  }

  async #completed(message: AssistantMessage, runId: string): Promise<ProtocolEvent[]> {
    const events: ProtocolEvent[] = [];
    // Read before any state changes: a read that fails is retried with the same event.
    const through = await this.#through(message.id);
    const streaming = this.#streaming.get(runId);
    this.#streaming.delete(runId);
    const step = streaming?.step ?? 0;
    const index = through.findIndex((view) => view.id === message.id);
    const ai = toAiMessage(message);
    const results = index === -1 ? [] : through.slice(index + 1);
    if (this.modes.has('messages-tuple')) {
      const uses = toolUsesOf(message.content);
      // The text already streamed under the chunk id: close that message with its tool calls.
      const closing =
        streaming === undefined
          ? ai
          : {
              ...emptyChunk(streaming.id),
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
      events.push(this.#tuple(closing, runId, agentNode, step));
      for (const result of results) events.push(this.#tuple(result, runId, toolsNode, step));
    }
    if (this.modes.has('updates')) {
      events.push({ event: 'updates', data: { [agentNode]: { messages: [ai] } } });
      if (results.length > 0) events.push({ event: 'updates', data: { [toolsNode]: { messages: results } } });
    }
    if (this.modes.has('values') && through.length > 0)
      events.push({ event: 'values', data: { messages: through } });
    events.push(...this.#checkpoint(message.id));
    return events;
  }

  /** `checkpoints`: the checkpoint the step that committed `messageId` made, as history shows it. */
  #checkpoint(messageId: string): ProtocolEvent[] {
    if (!this.modes.has('checkpoints')) return [];
    const index = this.#transcript.findIndex((message) => message.id === messageId);
    const unit = commitUnits(this.#transcript).find((candidate) => candidate.end >= index);
    if (index === -1 || unit === undefined) return [];
    const through = this.#transcript.slice(0, unit.end + 1);
    const state = threadCheckpoints(this.threadId, through, { created_at: '', busy: false }).at(-1);
    return state === undefined ? [] : [{ event: 'checkpoints', data: checkpointEvent(state) }];
  }

  #when(mode: ProtocolStreamMode, events: () => ProtocolEvent[]): ProtocolEvent[] {
    return this.modes.has(mode) ? events() : [];
  }

  #tuple(message: object, runId: string, node: string, step: number): ProtocolEvent {
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

  async #values(messageId: string): Promise<ProtocolEvent[]> {
    if (!this.modes.has('values') && !this.modes.has('checkpoints')) return [];
    const messages = await this.#through(messageId);
    if (messages.length === 0) return [];
    return [
      ...this.#when('values', () => [{ event: 'values', data: { messages } }]),
      ...this.#checkpoint(messageId),
    ];
  }

  /** The thread's messages through the step that committed `messageId`. */
  async #through(messageId: string): Promise<LangChainMessage[]> {
    if (!this.#transcript.some((message) => message.id === messageId)) await this.#catchUp();
    return messagesThroughStep(this.#transcript, messageId) ?? [];
  }

  async #messagesOf(runId: string): Promise<Message[]> {
    // The transcript only grows: caught up, it has every message an event so far announced.
    await this.#catchUp();
    return this.#transcript.filter((message) => message.run_id === runId);
  }

  /**
   * Reads the messages appended since the last read (all of them the first time): message `mN`
   * is the N-th ever appended, so the last one held says where to go on from.
   */
  async #catchUp(): Promise<void> {
    const last = this.#transcript.at(-1);
    const held = last === undefined ? undefined : sequenceOf(last.id);
    if (held === undefined) this.#transcript = await this.readTranscript();
    else this.#transcript = [...this.#transcript, ...(await this.readTranscript(held))];
  }
}

const configOf = (ref: CheckpointRef) => ({
  configurable: {
    thread_id: ref.thread_id,
    checkpoint_ns: ref.checkpoint_ns,
    checkpoint_id: ref.checkpoint_id,
  },
});

/** A checkpoint as LangGraph's `checkpoints` stream mode sends one. */
function checkpointEvent(state: ThreadState) {
  return {
    config: configOf(state.checkpoint),
    parent_config: state.parent_checkpoint === null ? null : configOf(state.parent_checkpoint),
    values: state.values,
    metadata: state.metadata,
    next: state.next,
    tasks: state.tasks.map((task) => ({
      id: task.id,
      name: task.name,
      interrupts: task.interrupts,
      state: null,
    })),
  };
}

/** An AI message chunk as LangGraph serialises one. */
function emptyChunk(id: string) {
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
