/**
 * LangGraph's `events` stream mode: LangChain's `astream_events` (v2) records for the graph, its
 * nodes, the model calls and the tools (decision 0099), made from the facts the run stream's
 * translator hands over. It remembers one thing per run: the model call under way, opened when
 * the agent's task starts and closed when its message commits.
 */
import type { AssistantMessage } from '../../common/transcript';
import { toolUsesOf } from '../../common/transcript';
import { agentNode, toolsNode } from './graph';
import type { LangChainMessage } from './langchain-messages';
import type { ProtocolEvent } from './stream-modes';

/** The names `events` gives the graph and the model call (LangGraph's root is `LangGraph`). */
const graphName = 'LangGraph';
const modelName = 'ChatModel';

/** Where an event happens: the node and its step (none for the graph's own start and end). */
type At = { node: string; step: number } | undefined;

export class LangChainEvents {
  /** Per run, the model call under way (its run id, its parents, its step). */
  readonly #model = new Map<string, { id: string; parents: string[]; step: number }>();

  constructor(private readonly threadId: string) {}

  /** The graph starts, with the messages the run brought in as its input. */
  graphStart(runId: string, input: LangChainMessage[]): ProtocolEvent {
    return this.#event('on_chain_start', graphName, runId, [], runId, undefined, {
      input: { messages: input },
    });
  }

  /** The graph ends, with the thread's messages through the run's last step. */
  graphEnd(runId: string, output: LangChainMessage[]): ProtocolEvent {
    return this.#event('on_chain_end', graphName, runId, [], runId, undefined, {
      output: { messages: output },
    });
  }

  /** The agent node (task `taskId`) starts at `step` with the state `values`, and the model call in it. */
  agentStart(runId: string, taskId: string, step: number, values: { messages: unknown }): ProtocolEvent[] {
    const model = { id: `${taskId}:model`, parents: [runId, taskId], step };
    this.#model.set(runId, model);
    const at = { node: agentNode, step };
    return [
      this.#event('on_chain_start', agentNode, taskId, [runId], runId, at, { input: values }),
      this.#event('on_chat_model_start', modelName, model.id, model.parents, runId, at, {
        input: { messages: [values.messages] },
      }),
    ];
  }

  /** A chunk of the model's text, inside the model call under way (none when none is). */
  modelChunk(runId: string, chunk: object): ProtocolEvent[] {
    const model = this.#model.get(runId);
    if (model === undefined) return [];
    return [
      this.#event('on_chat_model_stream', modelName, model.id, model.parents, runId, this.#modelAt(model), {
        chunk,
      }),
    ];
  }

  /**
   * The model call ends and the agent node with it; with tool results, the tools node runs each
   * tool (Keel commits a call with its results, so they are told here, in order). `step` is the
   * step that committed `message`; `through` the thread's messages through it.
   */
  committed(
    message: AssistantMessage,
    runId: string,
    step: number | undefined,
    ai: LangChainMessage,
    results: LangChainMessage[],
    through: LangChainMessage[],
  ): ProtocolEvent[] {
    const model = this.#model.get(runId);
    this.#model.delete(runId);
    if (model === undefined || step === undefined) return [];
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
    const agentAt = this.#modelAt(model);
    const events = [
      this.#event('on_chat_model_end', modelName, model.id, model.parents, runId, agentAt, {
        output: ai,
        input: { messages: [input.messages] },
      }),
      this.#event('on_chain_end', agentNode, node, [runId], runId, agentAt, {
        output: { messages: [ai] },
        input,
      }),
    ];
    if (results.length === 0) return events;
    const tools = `${message.id}:${toolsNode}`;
    const toolsAt = { node: toolsNode, step };
    const toolsInput = { messages: through.slice(0, through.length - results.length) };
    events.push(
      this.#event('on_chain_start', toolsNode, tools, [runId], runId, toolsAt, { input: toolsInput }),
    );
    const calls = toolUsesOf(message.content);
    for (const result of results) {
      const call = calls.find((use) => result.type === 'tool' && use.id === result.tool_call_id);
      const name = call?.name ?? 'tool';
      const id = call?.id ?? result.id;
      const input = call?.input ?? {};
      events.push(
        this.#event('on_tool_start', name, id, [runId, tools], runId, toolsAt, { input }),
        this.#event('on_tool_end', name, id, [runId, tools], runId, toolsAt, { output: result, input }),
      );
    }
    events.push(
      this.#event('on_chain_end', toolsNode, tools, [runId], runId, toolsAt, {
        output: { messages: results },
        input: toolsInput,
      }),
    );
    return events;
  }

  #modelAt(model: { step: number }): At {
    return { node: agentNode, step: model.step };
  }

  /** An event as LangChain's `astream_events` (v2) sends one, under LangGraph's `events` mode. */
  #event(
    event: string,
    name: string,
    id: string,
    parents: string[],
    runId: string,
    at: At,
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
}
