/**
 * Keel's durable events translated into LangGraph's stream modes, one Keel event at a time
 * (docs/decisions/0091-stream-modes.md):
 *
 * - `values`: the thread's messages after each committed step (a run's input, a tool call with
 *   its results, an answer), read from the transcript through that step, so a replay shows
 *   each step as it was then;
 * - `messages-tuple` (event `messages`): `[chunk, metadata]`, the model's text as AI message
 *   chunks, then a closing chunk with its tool calls, then each tool result as a tool message
 *   (with the older `messages` mode, in `message-modes.ts`);
 * - `updates`: `{agent: {messages}}` and `{tools: {messages}}` per step;
 * - `custom`: Keel's own events (tools, usage, approvals, budgets, children) as
 *   `{event, data}` in Keel's native names;
 * - `checkpoints`: each committed step's checkpoint, as history lists it;
 * - `tasks` and `debug`: task starts and results, and checkpoints wrapped (`task-modes.ts`);
 * - `events`: LangChain's `astream_events` (v2) records (`langchain-events.ts`);
 * - `error` whenever a run fails, whatever the modes.
 */
import type { KeelEvent } from '../../common/events';
import type { AssistantMessage, Message } from '../../common/transcript';
import { sequenceOf, toolUsesOf } from '../../common/transcript';
import { commitUnits, messagesThroughStep } from './checkpoints';
import { agentNode, toolsNode } from './graph';
import type { PendingApproval } from '../../common/approvals';
import { toInterrupt } from './interrupts';
import { LangChainEvents } from './langchain-events';
import { toAiMessage, toLangChainMessages, type LangChainMessage } from './langchain-messages';
import { closingChunk, emptyChunk as emptyChunkOf, MessageModes } from './message-modes';
import type { ProtocolEvent, ProtocolStreamMode } from './stream-modes';
import { TaskModes } from './task-modes';

export type { ProtocolEvent } from './stream-modes';

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
  readonly #messages: MessageModes;
  readonly #tasks: TaskModes;
  readonly #events: LangChainEvents | undefined;

  constructor(
    private readonly modes: ReadonlySet<ProtocolStreamMode>,
    threadId: string,
    /** The transcript, or with `after` only the messages after the first `after` ever appended. */
    private readonly readTranscript: (after?: number) => Promise<Message[]>,
    /** The thread's pending approvals now. */
    private readonly readPending: () => Promise<PendingApproval[]> = () => Promise.resolve([]),
  ) {
    this.#messages = new MessageModes(modes, threadId);
    this.#tasks = new TaskModes(modes, threadId);
    this.#events = modes.has('events') ? new LangChainEvents(threadId) : undefined;
  }

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
        if (first === undefined) return [];
        const runId = keelEvent.data.run.run_id;
        const graph = this.#events?.graphStart(runId, this.#runMessages(runId));
        return [
          ...(graph === undefined ? [] : [graph]),
          ...(await this.#values(first.id)),
          ...this.#nextTasks(first.id, runId),
        ];
      }
      case 'message.delta': {
        const { run_id, step, attempt, text } = keelEvent.data;
        const id = chunkIdOf(run_id, step, attempt);
        this.#streaming.set(run_id, { id, step });
        return [
          ...this.#messages.chunk(text, id, run_id, agentNode, step),
          ...(this.#events?.modelChunk(run_id, { ...emptyChunkOf(id), content: text }) ?? []),
        ];
      }
      case 'message.completed': {
        const { message, run_id } = keelEvent.data;
        return message.role === 'assistant' ? this.#completed(message, run_id) : [];
      }
      case 'run.completed': {
        if (this.#events === undefined) return [];
        const { run } = keelEvent.data;
        const last = (await this.#messagesOf(run.run_id)).at(-1);
        return [this.#events.graphEnd(run.run_id, last === undefined ? [] : await this.#through(last.id))];
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
    if (this.#messages.wanted) {
      // The text already streamed under the chunk id: close that message with its tool calls.
      const closing =
        streaming === undefined ? ai : closingChunk(streaming.id, toolUsesOf(message.content), ai);
      events.push(
        ...this.#messages.send([
          this.#messages.tuple(closing, runId, agentNode, step),
          ...results.map((result) => this.#messages.tuple(result, runId, toolsNode, step)),
        ]),
      );
    }
    events.push(...this.#tasks.committed(this.#transcript, message, ai, results, through));
    if (this.#events !== undefined)
      events.push(...this.#events.committed(message, runId, this.#stepOf(message.id), ai, results, through));
    if (this.modes.has('updates')) {
      events.push({ event: 'updates', data: { [agentNode]: { messages: [ai] } } });
      if (results.length > 0) events.push({ event: 'updates', data: { [toolsNode]: { messages: results } } });
    }
    if (this.modes.has('values') && through.length > 0)
      events.push({ event: 'values', data: { messages: through } });
    events.push(...this.#tasks.checkpoint(this.#transcript, message.id));
    if (results.length > 0) events.push(...this.#nextTasks(message.id, runId));
    return events;
  }

  /** The messages a run brought in, as LangChain messages (its input). */
  #runMessages(runId: string): LangChainMessage[] {
    const index = this.#transcript.findIndex((message) => message.run_id === runId);
    const first = this.#transcript[index];
    if (first === undefined) return [];
    const before =
      index === 0 ? [] : (messagesThroughStep(this.#transcript, this.#transcript[index - 1]!.id) ?? []);
    return (messagesThroughStep(this.#transcript, first.id) ?? []).slice(before.length);
  }

  /** The step (a checkpoint's `metadata.step`) of the step that committed `messageId`. */
  #stepOf(messageId: string): number | undefined {
    const index = this.#transcript.findIndex((candidate) => candidate.id === messageId);
    const step = commitUnits(this.#transcript).findIndex((unit) => unit.end >= index);
    return index === -1 || step === -1 ? undefined : step;
  }

  /** After the checkpoint that committed `messageId`, the agent's task starts (and, for `events`, its model call). */
  #nextTasks(messageId: string, runId: string): ProtocolEvent[] {
    if (!this.#tasks.wanted && this.#events === undefined) return [];
    const state = this.#tasks.stateAt(this.#transcript, messageId);
    if (state === undefined) return [];
    const task = this.#tasks.agentStart(state);
    return [...task.events, ...(this.#events?.agentStart(runId, task.id, task.step, state.values) ?? [])];
  }

  #when(mode: ProtocolStreamMode, events: () => ProtocolEvent[]): ProtocolEvent[] {
    return this.modes.has(mode) ? events() : [];
  }

  async #values(messageId: string): Promise<ProtocolEvent[]> {
    if (
      !['values', 'checkpoints', 'debug', 'tasks'].some((mode) => this.modes.has(mode as ProtocolStreamMode))
    )
      return [];
    const messages = await this.#through(messageId);
    if (messages.length === 0) return [];
    return [
      ...this.#when('values', () => [{ event: 'values', data: { messages } }]),
      ...this.#tasks.checkpoint(this.#transcript, messageId),
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
