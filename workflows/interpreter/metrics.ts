/**
 * Tells the worker's metrics what a transition did: a run that ended, an approval resolved. Only
 * facts already in the state and the emitted events, measured in workflow time, through a sink
 * the SDK skips on replay (common/sinks.ts).
 */
import { proxySinks } from '@temporalio/workflow';
import type { KeelSinks } from '../../common/sinks';
import type { ThreadState } from '../core/state';
import type { Command } from '../core/transitions';

const { keelMetrics } = proxySinks<KeelSinks>();

const elapsedMs = (from: string | undefined, to: string | undefined): number =>
  from === undefined || to === undefined ? 0 : Math.max(0, Date.parse(to) - Date.parse(from));

/** When each approval pending before the transition was asked for. */
function requestedAt(state: ThreadState): Map<string, string> {
  const step = state.active?.step;
  const found = new Map<string, string>();
  if (step?.kind !== 'tools') return found;
  for (const call of step.calls)
    if (call.approval !== undefined) found.set(call.approval.approval_id, call.approval.requested_at);
  return found;
}

export function observeTransition(before: ThreadState, commands: readonly Command[], nowMs: number): void {
  for (const command of commands) {
    if (command.type !== 'emit') continue;
    const { event } = command;
    switch (event.event) {
      case 'run.completed':
      case 'run.failed':
      case 'run.cancelled': {
        const { run } = event.data;
        if (run.status !== 'completed' && run.status !== 'failed' && run.status !== 'cancelled') break;
        keelMetrics.runEnded({
          status: run.status,
          status_reason: run.status_reason ?? 'none',
          duration_ms: elapsedMs(run.started_at ?? run.created_at, run.ended_at),
          ...(run.refused_input === undefined ? {} : { refused: true }),
        });
        break;
      }
      case 'approval.resolved': {
        const asked = requestedAt(before).get(event.data.approval_id);
        if (asked !== undefined)
          keelMetrics.approvalResolved({
            decision: event.data.decision,
            wait_ms: Math.max(0, nowMs - Date.parse(asked)),
          });
        break;
      }
      default:
        break;
    }
  }
}
