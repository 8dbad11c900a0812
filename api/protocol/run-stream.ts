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
 * - `checkpoints`: each committed step's checkpoint, as history lists it;
 * - `tasks`: a task start (`{id, name, input, triggers}`) when a node is about to run and a task
 *   result (`{id, name, error, result, interrupts}`) when it has, for `agent` and `tools`;
 * - `debug`: checkpoints, task starts and task results wrapped as
 *   `{type: 'checkpoint'|'task'|'task_result', timestamp, step, payload}`;
 * - `messages` (LangGraph Platform's older mode, derived from the tuples): `messages/metadata`
 *   the first time a message id is seen, then `messages/partial` with the AI message accumulated
 *   so far, or `messages/complete` for a whole message (a tool result);
 * - `events`: LangChain's `astream_events` (v2) records for the graph, its nodes, the model calls
 *   and the tools (decision 0099);
 * - `error` whenever a run fails, whatever the modes.
 */
import type { KeelEvent } from '../../common/events';
import type { AssistantMessage, Message } from '../../common/transcript';
import { sequenceOf, toolUsesOf } from '../../common/transcript';
import {
  commitUnits,
  initialCheckpointId,
  messagesThroughStep,
  threadCheckpoints,
  type CheckpointRef,
  type ThreadState,
} from './checkpoints';
import { agentNode, toolsNode } from './graph';
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
  /** `events`: per run, the model call under way (its run id, its parents, its step). */
  readonly #model = new Map<string, { id: string; parents: string[]; step: number }>();
  /** `messages`: each AI message accumulated from its chunks so far, by id. */
  readonly #partials = new Map<string, WireMessage>();

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
        if (first === undefined) return [];
        const runId = keelEvent.data.run.run_id;
        const graph = this.#when('events', () => [
          this.#lcEvent('on_chain_start', graphName, runId, [], runId, undefined, {
            input: { messages: this.#runMessages(runId) },
          }),
        ]);
        return [...graph, ...(await this.#values(first.id)), ...this.#nextTasks(first.id, runId)];
      }
      case 'message.delta': {
        const { run_id, step, attempt, text } = keelEvent.data;
        const id = chunkIdOf(run_id, step, attempt);
        this.#streaming.set(run_id, { id, step });
        const chunk = { ...emptyChunk(id), content: text };
        const model = this.#model.get(run_id);
        return [
          ...this.#messages([this.#tuple(chunk, run_id, agentNode, step)]),
          ...(model === undefined
            ? []
            : [
                this.#lcEvent(
                  'on_chat_model_stream',
                  modelName,
                  model.id,
                  model.parents,
                  run_id,
                  { node: agentNode, step: model.step },
                  { chunk },
                ),
              ]),
        ];
      }
      case 'message.completed': {
        const { message, run_id } = keelEvent.data;
        return message.role === 'assistant' ? this.#completed(message, run_id) : [];
      }
      case 'run.completed': {
        if (!this.modes.has('events')) return [];
        const { run } = keelEvent.data;
        const last = (await this.#messagesOf(run.run_id)).at(-1);
        const output = last === undefined ? [] : await this.#through(last.id);
        return [
          this.#lcEvent('on_chain_end', graphName, run.run_id, [], run.run_id, undefined, {
            output: { messages: output },
          }),
        ];
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
    if (this.modes.has('messages-tuple') || this.modes.has('messages')) {
      const tuples: ProtocolEvent[] = [];
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
      tuples.push(this.#tuple(closing, runId, agentNode, step));
      for (const result of results) tuples.push(this.#tuple(result, runId, toolsNode, step));
      events.push(...this.#messages(tuples));
    }
    events.push(...this.#taskResults(message, ai, results, through));
    events.push(...this.#nodeEvents(message, runId, ai, results, through));
    if (this.modes.has('updates')) {
      events.push({ event: 'updates', data: { [agentNode]: { messages: [ai] } } });
      if (results.length > 0) events.push({ event: 'updates', data: { [toolsNode]: { messages: results } } });
    }
    if (this.modes.has('values') && through.length > 0)
      events.push({ event: 'values', data: { messages: through } });
    events.push(...this.#checkpoint(message.id));
    if (results.length > 0) events.push(...this.#nextTasks(message.id, runId));
    return events;
  }

  /**
   * `events`: the model call ends and the agent node with it; with tool results, the tools node
   * runs each tool (Keel commits a call with its results, so they are told here, in order).
   */
  #nodeEvents(
    message: AssistantMessage,
    runId: string,
    ai: LangChainMessage,
    results: LangChainMessage[],
    through: LangChainMessage[],
  ): ProtocolEvent[] {
    if (!this.modes.has('events')) return [];
    const model = this.#model.get(runId);
    this.#model.delete(runId);
    const at = this.#stepOf(message.id);
    if (model === undefined || at === undefined) return [];
    const node = model.parents[1]!;
    // What the model was given: the state before its message.
    const input = {
      messages: through.slice(
        0,
        Math.max(
          0,
          through.findIndex((view) => view.id === ai.id),
        ),
      ),
    };
    const events = [
      this.#lcEvent(
        'on_chat_model_end',
        modelName,
        model.id,
        model.parents,
        runId,
        { node: agentNode, step: model.step },
        {
          output: ai,
          input: { messages: [input.messages] },
        },
      ),
      this.#lcEvent(
        'on_chain_end',
        agentNode,
        node,
        [runId],
        runId,
        { node: agentNode, step: model.step },
        {
          output: { messages: [ai] },
          input,
        },
      ),
    ];
    if (results.length === 0) return events;
    const tools = `${message.id}:${toolsNode}`;
    const toolsInput = { messages: through.slice(0, through.length - results.length) };
    events.push(
      this.#lcEvent(
        'on_chain_start',
        toolsNode,
        tools,
        [runId],
        runId,
        { node: toolsNode, step: at.step },
        { input: toolsInput },
      ),
    );
    const calls = toolUsesOf(message.content);
    for (const result of results) {
      const call = calls.find((use) => result.type === 'tool' && use.id === result.tool_call_id);
      const name = call?.name ?? 'tool';
      const id = call?.id ?? result.id;
      events.push(
        this.#lcEvent(
          'on_tool_start',
          name,
          id,
          [runId, tools],
          runId,
          { node: toolsNode, step: at.step },
          {
            input: call?.input ?? {},
          },
        ),
        this.#lcEvent(
          'on_tool_end',
          name,
          id,
          [runId, tools],
          runId,
          { node: toolsNode, step: at.step },
          {
            output: result,
            input: call?.input ?? {},
          },
        ),
      );
    }
    events.push(
      this.#lcEvent(
        'on_chain_end',
        toolsNode,
        tools,
        [runId],
        runId,
        { node: toolsNode, step: at.step },
        {
          output: { messages: results },
          input: toolsInput,
        },
      ),
    );
    return events;
  }

  /**
   * An event as LangChain's `astream_events` (v2) sends one, under LangGraph's `events` mode:
   * `at` is the node (and step) it happens in, none for the graph's own start and end.
   */
  #lcEvent(
    event: string,
    name: string,
    id: string,
    parents: string[],
    runId: string,
    at: { node: string; step: number } | undefined,
    data: object,
  ): ProtocolEvent {
    return {
      event: 'events',
      data: {
        event,
        name,
        run_id: id,
        parent_ids: parents,
        tags: at === undefined ? [] : [`graph:step:${at.step}`],
        metadata: {
          run_id: runId,
          thread_id: this.threadId,
          graph_id: 'agent',
          ...(at === undefined ? {} : { langgraph_step: at.step, langgraph_node: at.node }),
        },
        data,
      },
    };
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
  #stepOf(messageId: string): { step: number } | undefined {
    const index = this.#transcript.findIndex((candidate) => candidate.id === messageId);
    const step = commitUnits(this.#transcript).findIndex((unit) => unit.end >= index);
    return index === -1 || step === -1 ? undefined : { step };
  }

  /** The tuples as `messages-tuple` sends them, and/or as the older `messages` mode does. */
  #messages(tuples: ProtocolEvent[]): ProtocolEvent[] {
    const events = this.#when('messages-tuple', () => [...tuples]);
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

  /**
   * `tasks`/`debug` for a model call that committed `message`: the agent's task result, and
   * with tool results the tools task's start and result (Keel commits a call with its results).
   */
  #taskResults(
    message: AssistantMessage,
    ai: LangChainMessage,
    results: LangChainMessage[],
    through: LangChainMessage[],
  ): ProtocolEvent[] {
    if (!this.modes.has('tasks') && !this.modes.has('debug')) return [];
    const index = this.#transcript.findIndex((candidate) => candidate.id === message.id);
    const units = commitUnits(this.#transcript);
    const step = units.findIndex((unit) => unit.end >= index);
    if (index === -1 || step === -1) return [];
    const before = step === 0 ? initialCheckpointId : this.#transcript[units[step - 1]!.end]!.id;
    const last = this.#transcript[units[step]!.end]!;
    const events = this.#task(step, message.created_at, {
      id: `${before}:${agentNode}`,
      name: agentNode,
      error: null,
      result: [['messages', [ai]]],
      interrupts: [],
    });
    if (results.length === 0) return events;
    const tools = `${message.id}:${toolsNode}`;
    return [
      ...events,
      ...this.#task(step, message.created_at, {
        id: tools,
        name: toolsNode,
        input: { messages: through.slice(0, through.length - results.length) },
        triggers: [`branch:to:${toolsNode}`],
      }),
      ...this.#task(step, last.created_at, {
        id: tools,
        name: toolsNode,
        error: null,
        result: [['messages', results]],
        interrupts: [],
      }),
    ];
  }

  /** `tasks`/`debug`: after the checkpoint that committed `messageId`, the agent's task starts. */
  #nextTasks(messageId: string, runId: string): ProtocolEvent[] {
    if (!this.modes.has('tasks') && !this.modes.has('debug') && !this.modes.has('events')) return [];
    const state = this.#stateAt(messageId);
    if (state === undefined) return [];
    const step = state.metadata.step + 1;
    const id = `${state.checkpoint.checkpoint_id}:${agentNode}`;
    const tasks = this.#task(step, state.created_at, {
      id,
      name: agentNode,
      input: state.values,
      triggers: [`branch:to:${agentNode}`],
    });
    if (!this.modes.has('events')) return tasks;
    // `events`: the agent node starts, and the model call in it.
    const model = { id: `${id}:model`, parents: [runId, id], step };
    this.#model.set(runId, model);
    return [
      ...tasks,
      this.#lcEvent(
        'on_chain_start',
        agentNode,
        id,
        [runId],
        runId,
        { node: agentNode, step },
        { input: state.values },
      ),
      this.#lcEvent(
        'on_chat_model_start',
        modelName,
        model.id,
        model.parents,
        runId,
        { node: agentNode, step },
        {
          input: { messages: [state.values.messages] },
        },
      ),
    ];
  }

  /** A task start (with `input`) or result as `tasks` sends it, and wrapped as `debug` does. */
  #task(step: number, timestamp: string, payload: TaskPayload): ProtocolEvent[] {
    return [
      ...this.#when('tasks', () => [{ event: 'tasks', data: payload }]),
      ...this.#when('debug', () => [
        {
          event: 'debug',
          data: { type: 'input' in payload ? 'task' : 'task_result', timestamp, step, payload },
        },
      ]),
    ];
  }

  /** `checkpoints`: the checkpoint the step that committed `messageId` made, as history shows it. */
  #checkpoint(messageId: string): ProtocolEvent[] {
    if (!this.modes.has('checkpoints') && !this.modes.has('debug')) return [];
    const state = this.#stateAt(messageId);
    if (state === undefined) return [];
    const payload = checkpointEvent(state);
    return [
      ...this.#when('checkpoints', () => [{ event: 'checkpoints', data: payload }]),
      ...this.#when('debug', () => [
        {
          event: 'debug',
          data: { type: 'checkpoint', timestamp: state.created_at, step: state.metadata.step, payload },
        },
      ]),
    ];
  }

  /** The checkpoint of the step that committed `messageId`. */
  #stateAt(messageId: string): ThreadState | undefined {
    const index = this.#transcript.findIndex((message) => message.id === messageId);
    const unit = commitUnits(this.#transcript).find((candidate) => candidate.end >= index);
    if (index === -1 || unit === undefined) return undefined;
    const through = this.#transcript.slice(0, unit.end + 1);
    return threadCheckpoints(this.threadId, through, { created_at: '', busy: false }).at(-1);
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
    if (
      !['values', 'checkpoints', 'debug', 'tasks'].some((mode) => this.modes.has(mode as ProtocolStreamMode))
    )
      return [];
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

/** The names `events` gives the graph and the model call (LangGraph's root is `LangGraph`). */
const graphName = 'LangGraph';
const modelName = 'ChatModel';

type TaskPayload =
  | { id: string; name: string; input: unknown; triggers: string[] }
  | {
      id: string;
      name: string;
      error: string | null;
      result: Array<[string, unknown]>;
      interrupts: unknown[];
    };

/** A message as a stream carries it: a LangChain message or an AI message chunk. */
type WireMessage = { id: string; type: string; content: unknown } & Record<string, unknown>;

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
