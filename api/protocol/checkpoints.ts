/**
 * LangGraph checkpoints as a view of the transcript: one per committed step. A step commits
 * its messages as one unit (the run's input, a final answer, or a tool call together with its
 * results), so every unit boundary is a state LangGraph would have checkpointed. Pure.
 */
import type { Branch, Message } from '../../common/transcript';
import { sequenceOf, toolUsesOf } from '../../common/transcript';
import { agentNode, toolsNode } from './graph';
import type { Interrupt } from './interrupts';
import { toLangChainMessages, type LangChainMessage } from './langchain-messages';

export interface CheckpointRef {
  thread_id: string;
  checkpoint_ns: '';
  checkpoint_id: string;
  checkpoint_map: null;
}

export interface ThreadTask {
  id: string;
  name: string;
  error: null;
  interrupts: Interrupt[];
  checkpoint: null;
  state: null;
}

/** A thread's state at one checkpoint, as `GET /threads/:id/state` and history return it. */
export interface ThreadState {
  values: { messages: LangChainMessage[] };
  next: string[];
  tasks: ThreadTask[];
  checkpoint: CheckpointRef;
  parent_checkpoint: CheckpointRef | null;
  metadata: { source: 'input' | 'loop'; step: number; run_id: string | null; parents: Record<string, never> };
  created_at: string;
  interrupts: Interrupt[];
}

/** A committed step: the transcript through `end` (inclusive). */
export interface CommitUnit {
  end: number;
  /** The node whose output this is (`input` for a run's input). */
  node: 'input' | typeof agentNode | typeof toolsNode;
  run_id: string;
}

/** Where each committed step ends in the transcript. */
export function commitUnits(messages: readonly Message[]): CommitUnit[] {
  const units: CommitUnit[] = [];
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    if (message.role === 'assistant' && toolUsesOf(message.content).length > 0) {
      // The tool results enter together with the call (the transcript invariant).
      const results = messages[index + 1];
      if (results?.role === 'user') index++;
      units.push({ end: index, node: toolsNode, run_id: message.run_id });
    } else if (message.role === 'assistant')
      units.push({ end: index, node: agentNode, run_id: message.run_id });
    else units.push({ end: index, node: 'input', run_id: message.run_id });
  }
  return units;
}

/**
 * The newest state while approvals wait: the tools node is next, and its task holds them as
 * interrupts, as LangGraph shows a graph stopped by `interrupt()`.
 */
export function withInterrupts(state: ThreadState, interrupts: Interrupt[]): ThreadState {
  if (interrupts.length === 0) return state;
  const task: ThreadTask = {
    ...tasksFor(state.checkpoint.checkpoint_id, [toolsNode])[0]!,
    interrupts,
  };
  return { ...state, next: [toolsNode], tasks: [task], interrupts };
}

/** The messages through the end of the step that committed message `messageId`; undefined if not found. */
export function messagesThroughStep(
  messages: readonly Message[],
  messageId: string,
): LangChainMessage[] | undefined {
  const index = messages.findIndex((message) => message.id === messageId);
  if (index === -1) return undefined;
  const unit = commitUnits(messages).find((candidate) => candidate.end >= index);
  return toLangChainMessages(messages.slice(0, (unit?.end ?? index) + 1));
}

const ref = (threadId: string, checkpointId: string): CheckpointRef => ({
  thread_id: threadId,
  checkpoint_ns: '',
  checkpoint_id: checkpointId,
  checkpoint_map: null,
});

const tasksFor = (checkpointId: string, next: string[]): ThreadTask[] =>
  next.map((name) => ({
    id: `${checkpointId}:${name}`,
    name,
    error: null,
    interrupts: [],
    checkpoint: null,
    state: null,
  }));

/** The id of a thread's first message (workflows/state.ts starts the sequence at 1). */
const firstMessageId = 'm1';

/** The id of the empty checkpoint a thread starts from. */
export const initialCheckpointId = 'start';

/**
 * Every checkpoint of a thread's current branch, oldest first: the empty start, then one per
 * committed step. `busy`: a run is under way, so the newest state has the agent to run next.
 * `compacted`: whether the transcript's front was compacted away (no start then); without it,
 * read off the first message.
 */
export function threadCheckpoints(
  threadId: string,
  messages: readonly Message[],
  thread: { created_at: string; busy: boolean },
  compacted = messages[0] !== undefined && messages[0].id !== firstMessageId,
): ThreadState[] {
  const states: ThreadState[] = [];
  let parent: CheckpointRef | null = null;
  // A compacted transcript no longer starts at the thread's beginning: there is no empty start.
  if (!compacted) {
    const start = ref(threadId, initialCheckpointId);
    states.push({
      values: { messages: [] },
      next: messages.length === 0 && !thread.busy ? [] : ['__start__'],
      tasks: [],
      checkpoint: start,
      parent_checkpoint: null,
      metadata: { source: 'input', step: -1, run_id: null, parents: {} },
      created_at: thread.created_at,
      interrupts: [],
    });
    parent = start;
  }
  return [...states, ...statesAlong(threadId, messages, 0, parent, thread.busy)];
}

/**
 * The checkpoints of a thread's earlier branches (those forks cut off), oldest first within
 * each: a branch's first checkpoint has the fork point as its parent.
 */
export function branchCheckpoints(
  threadId: string,
  branches: ReadonlyArray<{ branch: Branch; path: readonly Message[] }>,
): ThreadState[] {
  return branches.flatMap(({ branch, path }) => {
    const from = path.length - branch.messages.length;
    return statesAlong(threadId, path, from, ref(threadId, branch.parent), false);
  });
}

/** Newest first, whatever branch they are on: message ids grow as messages are appended. */
export function newestFirst(states: readonly ThreadState[]): ThreadState[] {
  const order = (state: ThreadState) => sequenceOf(state.checkpoint.checkpoint_id) ?? 0;
  return [...states].sort((a, b) => order(b) - order(a));
}

/** The checkpoints of the steps of `path` that end at or after `from`, the first with `parent`. */
function statesAlong(
  threadId: string,
  path: readonly Message[],
  from: number,
  parent: CheckpointRef | null,
  busy: boolean,
): ThreadState[] {
  const units = commitUnits(path);
  const states: ThreadState[] = [];
  let previous = parent;
  units.forEach((unit, step) => {
    if (unit.end < from) return;
    const last = path[unit.end]!;
    const isNewest = step === units.length - 1;
    const next = unit.node === agentNode && !(isNewest && busy) ? [] : [agentNode];
    const checkpoint = ref(threadId, last.id);
    states.push({
      values: { messages: toLangChainMessages(path.slice(0, unit.end + 1)) },
      next,
      tasks: tasksFor(last.id, next),
      checkpoint,
      parent_checkpoint: previous,
      metadata: { source: unit.node === 'input' ? 'input' : 'loop', step, run_id: unit.run_id, parents: {} },
      created_at: last.created_at,
      interrupts: [],
    });
    previous = checkpoint;
  });
  return states;
}
