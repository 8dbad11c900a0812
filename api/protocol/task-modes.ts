/**
 * LangGraph's `tasks`, `checkpoints` and `debug` stream modes, made from the transcript: a task
 * start (`{id, name, input, triggers}`) when a node is about to run and a task result (`{id,
 * name, error, result, interrupts}`) when it has, for `agent` and `tools`; each committed step's
 * checkpoint, as history lists it; and `debug`, which wraps both as
 * `{type: 'checkpoint'|'task'|'task_result', timestamp, step, payload}`.
 */
import type { AssistantMessage, Message } from '../../common/transcript';
import {
  commitUnits,
  initialCheckpointId,
  threadCheckpoints,
  type CheckpointRef,
  type ThreadState,
} from './checkpoints';
import { agentNode, toolsNode } from './graph';
import type { LangChainMessage } from './langchain-messages';
import type { ProtocolEvent, ProtocolStreamMode } from './stream-modes';

type TaskPayload =
  | { id: string; name: string; input: unknown; triggers: string[] }
  | {
      id: string;
      name: string;
      error: string | null;
      result: Array<[string, unknown]>;
      interrupts: unknown[];
    };

export class TaskModes {
  constructor(
    private readonly modes: ReadonlySet<ProtocolStreamMode>,
    private readonly threadId: string,
  ) {}

  /** Whether `tasks` or `debug` is asked for. */
  get wanted(): boolean {
    return this.modes.has('tasks') || this.modes.has('debug');
  }

  /** The checkpoint of the step that committed `messageId`. */
  stateAt(transcript: readonly Message[], messageId: string): ThreadState | undefined {
    const index = transcript.findIndex((message) => message.id === messageId);
    const unit = commitUnits(transcript).find((candidate) => candidate.end >= index);
    if (index === -1 || unit === undefined) return undefined;
    const through = transcript.slice(0, unit.end + 1);
    return threadCheckpoints(this.threadId, through, { created_at: '', busy: false }).at(-1);
  }

  /** `checkpoints`: the checkpoint the step that committed `messageId` made, as history shows it. */
  checkpoint(transcript: readonly Message[], messageId: string): ProtocolEvent[] {
    if (!this.modes.has('checkpoints') && !this.modes.has('debug')) return [];
    const state = this.stateAt(transcript, messageId);
    if (state === undefined) return [];
    const payload = checkpointEvent(state);
    const { step } = state.metadata;
    return [
      ...(this.modes.has('checkpoints') ? [{ event: 'checkpoints', data: payload }] : []),
      ...(this.modes.has('debug')
        ? [{ event: 'debug', data: { type: 'checkpoint', timestamp: state.created_at, step, payload } }]
        : []),
    ];
  }

  /** After the checkpoint `state`, the agent's task starts: its id, its step and its events. */
  agentStart(state: ThreadState): { id: string; step: number; events: ProtocolEvent[] } {
    const step = state.metadata.step + 1;
    const id = `${state.checkpoint.checkpoint_id}:${agentNode}`;
    const events = this.#task(step, state.created_at, {
      id,
      name: agentNode,
      input: state.values,
      triggers: [`branch:to:${agentNode}`],
    });
    return { id, step, events };
  }

  /**
   * For a model call that committed `message`: the agent's task result, and with tool results
   * the tools task's start and result (Keel commits a call with its results).
   */
  committed(
    transcript: readonly Message[],
    message: AssistantMessage,
    ai: LangChainMessage,
    results: LangChainMessage[],
    through: LangChainMessage[],
  ): ProtocolEvent[] {
    if (!this.wanted) return [];
    const index = transcript.findIndex((candidate) => candidate.id === message.id);
    const units = commitUnits(transcript);
    const step = units.findIndex((unit) => unit.end >= index);
    if (index === -1 || step === -1) return [];
    const before = step === 0 ? initialCheckpointId : transcript[units[step - 1]!.end]!.id;
    const last = transcript[units[step]!.end]!;
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

  /** A task start (with `input`) or result as `tasks` sends it, and wrapped as `debug` does. */
  #task(step: number, timestamp: string, payload: TaskPayload): ProtocolEvent[] {
    return [
      ...(this.modes.has('tasks') ? [{ event: 'tasks', data: payload }] : []),
      ...(this.modes.has('debug')
        ? [
            {
              event: 'debug',
              data: { type: 'input' in payload ? 'task' : 'task_result', timestamp, step, payload },
            },
          ]
        : []),
    ];
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
