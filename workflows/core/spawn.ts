/**
 * A `spawn_agent` call, when it may start: the `startChild` command that starts a child thread
 * with the task as its first run (see sub-agents.ts for what its reports become).
 */
import { defaultChildTimeoutS, type ChildOrigin, type SpawnAgentInput } from '../../common/children';
import type { SubmitInput } from '../../common/messages';
import type { ToolUseBlock } from '../../common/transcript';
import { iso } from './emit';
import type { ChildRecord, ThreadState } from './state';
import type { Command } from './transitions';

function spawnInput(input: Record<string, unknown>): SpawnAgentInput {
  return {
    task: typeof input.task === 'string' ? input.task : '',
    ...(input.background === true ? { background: true } : {}),
    ...(typeof input.timeout_s === 'number' ? { timeout_s: input.timeout_s } : {}),
  };
}

/** A child's first run: its task, as a user message that waits its turn. */
const childTask = (task: string): SubmitInput => ({
  run_id: 'task',
  assistant_id: 'agent',
  content: [{ type: 'text', text: task }],
  multitask_strategy: 'enqueue',
  metadata: {},
});

/** The `startChild` command for a `spawn_agent` call, or why the call cannot start one. */
export function spawnCommand(
  state: ThreadState,
  runId: string,
  use: ToolUseBlock,
  now: number,
): { command: Command } | { refusal: string } {
  const input = spawnInput(use.input);
  if (input.task === '') return { refusal: 'spawn_agent needs a non-empty task' };
  const { thread } = state;
  const origin: ChildOrigin = {
    parent_thread_id: thread.thread_id,
    parent_run_id: runId,
    tool_use_id: use.id,
    task: input.task,
  };
  const background = input.background === true;
  const waitS = background ? 0 : (input.timeout_s ?? defaultChildTimeoutS);
  return {
    command: {
      type: 'startChild',
      run_id: runId,
      tool_use_id: use.id,
      task: input.task,
      first_run: childTask(input.task),
      background,
      wait_s: waitS,
      wait_ms: waitS > 0 ? waitS * 1000 : 0,
      child: {
        thread_id: `${thread.thread_id}.${use.id}`,
        ...(thread.owner === undefined ? {} : { owner: thread.owner }),
        metadata: { keel_child_of: origin },
        config: thread.config,
        created_at: iso(now),
      },
    },
  };
}

/** Records the children that `commands` start, so their reports find them whenever they come. */
export function trackChildren(state: ThreadState, commands: readonly Command[]): ThreadState {
  const started: ChildRecord[] = commands.flatMap((command) =>
    command.type === 'startChild'
      ? [
          {
            child_thread_id: command.child.thread_id,
            run_id: command.run_id,
            tool_use_id: command.tool_use_id,
            task: command.task,
            background: command.background,
            wait_s: command.wait_s,
            phase: 'starting' as const,
          },
        ]
      : [],
  );
  return started.length === 0 ? state : { ...state, children: [...(state.children ?? []), ...started] };
}

export const childOf = (state: ThreadState, childThreadId: string): ChildRecord | undefined =>
  state.children?.find((child) => child.child_thread_id === childThreadId);
