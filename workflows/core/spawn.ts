/**
 * A `spawn_agent` call, when it may start: the `startChild` command that starts a child thread
 * with the task as its first run (see sub-agents.ts for what its reports become).
 */
import type { ModelCallBudget } from '../../common/activities';
import { defaultChildTimeoutS, type ChildOrigin, type SpawnAgentInput } from '../../common/children';
import type { SubmitInput } from '../../common/messages';
import type { ThreadConfig } from '../../common/thread';
import type { ToolUseBlock } from '../../common/transcript';
import { childAllowance } from './budget';
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

/**
 * A thread's limits, as the child's share of them says (decision 0425): a child that copied its
 * parent's whole limits could spend them again beside it.
 */
function limitedTo(config: ThreadConfig, allowance: ModelCallBudget | undefined): ThreadConfig {
  if (allowance === undefined) return config;
  const { max_tokens: _tokens, max_cost_usd: _cost, ...kept } = config;
  return {
    ...kept,
    ...(allowance.tokens === undefined ? {} : { max_tokens: allowance.tokens }),
    ...(allowance.cost_usd === undefined ? {} : { max_cost_usd: allowance.cost_usd }),
  };
}

/**
 * The `startChild` command for a `spawn_agent` call, or why the call cannot start one. A thread
 * with limits gives the child a share of what is left as its own limits (`allowance`, by default
 * `childAllowance` for one child), held here until the child's report rolls its usage up.
 */
export function spawnCommand(
  state: ThreadState,
  runId: string,
  use: ToolUseBlock,
  now: number,
  allowance: ModelCallBudget | undefined = childAllowance(state, 1),
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
        config: limitedTo(thread.config, allowance),
        created_at: iso(now),
      },
      ...(allowance === undefined ? {} : { allowance }),
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
            ...(command.allowance === undefined ? {} : { allowance: command.allowance }),
          },
        ]
      : [],
  );
  return started.length === 0 ? state : { ...state, children: [...(state.children ?? []), ...started] };
}

export const childOf = (state: ThreadState, childThreadId: string): ChildRecord | undefined =>
  state.children?.find((child) => child.child_thread_id === childThreadId);
