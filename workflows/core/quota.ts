/**
 * A run admitted against its owner's quota (decision 0440), pure: its share is one more ceiling
 * on its model calls beside the thread's budget, and as it ends it settles with its ledger what
 * it was billed — its own usage (billed attempts and its sub-agents' reports included) plus the
 * shares its sub-agents still hold, which may yet be spent. So the ledger never holds less than
 * was billed.
 */
import type { RunError } from '../../common/run';
import type { Run } from '../../common/run';
import { findRun, type ThreadState } from './state';
import type { Command } from './transitions';

const micros = (dollars: number): number => Math.round(dollars * 1e6);

/** What the sub-agents one run spawned hold of its budget: their shares, not yet reported. */
function heldByChildren(state: ThreadState, runId: string): number {
  let held = 0;
  for (const child of state.children ?? [])
    if (child.run_id === runId) held += micros(child.allowance?.cost_usd ?? 0);
  return held;
}

/** What is left of the active run's share of its owner's quota, or undefined without one. */
export function quotaLeft(state: ThreadState): number | undefined {
  const runId = state.active?.run_id;
  const run = runId === undefined ? undefined : findRun(state, runId);
  const share = run?.quota?.cost_usd;
  if (run === undefined || share === undefined) return undefined;
  return Math.max(0, micros(share) - micros(run.usage.cost_usd) - heldByChildren(state, run.run_id)) / 1e6;
}

/** Why the active run may not make its next model call under its share, or undefined. */
export function quotaExceeded(state: ThreadState): RunError | undefined {
  const left = quotaLeft(state);
  if (left === undefined || left > 0) return undefined;
  return {
    type: 'QuotaExceeded',
    message:
      "this run's share of its owner's quota is spent; the next run gets a share of what the quota has left",
  };
}

const endings: ReadonlySet<string> = new Set(['run.completed', 'run.failed', 'run.cancelled']);

/** A `settleQuota` command for each run admitted against a quota that ended among `commands`. */
export function quotaSettlements(state: ThreadState, commands: readonly Command[]): Command[] {
  const settlements: Command[] = [];
  for (const command of commands) {
    if (command.type !== 'emit' || !endings.has(command.event.event)) continue;
    if (!('run' in command.event.data)) continue;
    const run: Run = command.event.data.run;
    if (run.quota === undefined) continue;
    const billed = micros(run.usage.cost_usd) + heldByChildren(state, run.run_id);
    settlements.push({
      type: 'settleQuota',
      run_id: run.run_id,
      billed_usd: billed / 1e6,
      ...(run.quota.ledger === undefined ? {} : { ledger: run.quota.ledger }),
    });
  }
  return settlements;
}
