/** Read-only views of the state, for queries, the Web UI's current details and search attributes. */
import { isTerminal, type Run } from '../../common/run';
import type { Thread, ThreadBudget } from '../../common/thread';
import { approvalResumeCommands, pendingApprovals } from './approvals';
import { budgetLeft, budgetNote, reserved } from './budget';
import { totalTokens } from '../../common/usage';
import type { ThreadState } from './state';
import { threadSummary, threadStatus } from './state';
import { callModelCommand } from './model-step';
import { runToolCommand } from './tool-step';
import { childOf, spawnCommand } from './spawn';
import { spawnAgentToolName } from '../../common/children';
import { textOf } from '../../common/transcript';
import { summarizeThread } from '../../common/summaries';
import type { Command } from './transitions';

/** A run a waiting caller (`runs/wait`) is answered with: over, or waiting on a human. */
export const isSettled = (run: Run): boolean =>
  isTerminal(run.status) || run.status_reason === 'awaiting_approval';

export function toThread(state: ThreadState): Thread {
  const { thread } = state;
  return {
    thread_id: thread.thread_id,
    ...(thread.owner === undefined ? {} : { owner: thread.owner }),
    status: threadStatus(state),
    metadata: thread.metadata,
    config: thread.config,
    created_at: thread.created_at,
    updated_at: state.updated_at,
    usage: state.usage,
    summary: threadSummary(state),
    ...(state.active === null ? {} : { active_run_id: state.active.run_id }),
    queued_run_ids: state.queue.map((queued) => queued.run_id),
    messages_count: state.compacted_messages + state.transcript.length,
    ...budgetView(state),
  };
}

function budgetView(state: ThreadState): { budget?: ThreadBudget } {
  const left = budgetLeft(state);
  if (left === undefined) return {};
  return {
    budget: {
      spent: { tokens: totalTokens(state.usage), cost_usd: state.usage.cost_usd },
      reserved: reserved(state),
      left,
    },
  };
}

/**
 * The commands that put a fresh workflow run back where the state says it is: used after
 * continue-as-new, which only happens when no activity is in flight.
 */
export function resumeCommands(state: ThreadState, now = Date.parse(state.updated_at)): Command[] {
  const active = state.active;
  if (active === null) return [];
  if (active.step.kind === 'model') {
    const call = callModelCommand(state, active, active.steps);
    // Stopped while handing over, before its call was made: made and stopped at once, it ends the
    // run through the same event as any stopped call.
    if (active.step.stopping !== undefined)
      return [call, { type: 'cancelActivities', run_id: active.run_id }];
    return [call];
  }
  // Calls still awaiting a human get their timers back, not a tool run. A child agent is only
  // started again if the last run never started it (it was handing over when the call was made).
  const running = active.step.calls.flatMap((call): Command[] => {
    if (call.status !== 'running') return [];
    if (call.use.name !== spawnAgentToolName)
      return [runToolCommand(state, active.run_id, call.use, call.flags)];
    const child = childOf(state, `${state.thread.thread_id}.${call.use.id}`);
    // Its share was carved out when it was first started, and is held in its record since.
    const spawn = spawnCommand(state, active.run_id, call.use, now, child?.allowance);
    return 'command' in spawn && child?.phase === 'starting' && child.report === undefined
      ? [spawn.command]
      : [];
  });
  return [...running, ...approvalResumeCommands(state)];
}

/** Markdown for the Temporal Web UI's "current details". */
export function currentDetails(state: ThreadState): string {
  const status = threadStatus(state);
  const first = state.transcript.find((message) => message.role === 'user');
  const thread = summarizeThread({
    ...state.thread,
    first_message: state.compacted_messages === 0 && first !== undefined ? textOf(first.content) : undefined,
  });
  const lines = [`**Thread:** ${thread}`, `**Status:** ${status}`];
  const active = state.active;
  if (active !== null) {
    const doing =
      active.step.kind === 'model'
        ? `calling ${active.model}`
        : `running ${active.step.calls
            .filter((call) => call.status !== 'done')
            .map((call) => call.use.name)
            .join(', ')}`;
    lines.push(`**Run:** ${active.run_id}, step ${active.steps}: ${doing}`);
  }
  if (state.queue.length > 0) lines.push(`**Queued runs:** ${state.queue.length}`);
  for (const approval of pendingApprovals(state))
    lines.push(
      `**Awaiting approval:** ${approval.tool} (${approval.approval_id}), expires ${approval.expires_at}`,
    );
  lines.push(
    `**Spend:** ${totalTokens(state.usage).toLocaleString('en-US')} tokens, $${state.usage.cost_usd.toFixed(4)}${budgetNote(state)}`,
  );
  lines.push(`**Runs:** ${state.totals.runs} finished, ${state.totals.steps} model calls`);
  return lines.join('\n');
}
