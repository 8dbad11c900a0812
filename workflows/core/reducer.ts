/**
 * The agent state machine: `(state, event) → { state, commands }`, pure and deterministic.
 * Each event goes to the one transition that decides it; then, whenever the thread is free, the
 * oldest queued run starts. The interpreter carries out the commands; tests drive this directly.
 */
import { updateLimits } from './budget';
import { decideApproval, expireApproval } from './approvals';
import { iso } from './emit';
import { refuseInput } from './intake';
import { afterToolStep, beginModelStep, modelFailed, modelResponded, modelStopped } from './model-step';
import {
  cancelRun,
  closeThread,
  deferRun,
  deleteRun,
  patchMetadata,
  startQueuedRun,
  submit,
  unchanged,
} from './run-lifecycle';
import type { ThreadState } from './state';
import {
  childCompleted,
  childStarted,
  childUsageReported,
  childWaitExpired,
  reportsToParent,
} from './sub-agents';
import { recordToolFailure, recordToolResult } from './tool-step';
import type { ConversationEvent, Transition } from './transitions';
import { webhookCommands } from './webhooks';
import { deletePushConfig, pushDeliveries, setPushConfig } from './push';
import { quotaSettlements } from './quota';

export function reduce(state: ThreadState, event: ConversationEvent): Transition {
  const touched = { ...state, updated_at: iso(event.now) };
  const settled = settle(apply(touched, event), event.now);
  // After everything else: a child's report to its parent, then the webhooks of runs that ended
  // and their settlements with their owner's quota; last, the A2A push notifications of runs that
  // ended, whose configs then leave the state.
  const pushed = pushDeliveries(settled.state, settled.commands);
  const after = [
    ...reportsToParent(settled.state, settled.commands),
    ...webhookCommands(settled.commands),
    ...quotaSettlements(settled.state, settled.commands),
    ...pushed.commands,
  ];
  const transition =
    after.length === 0 && pushed.state === settled.state
      ? settled
      : { state: pushed.state, commands: [...settled.commands, ...after] };
  // An event that changes nothing (a late retry, a duplicate) leaves the state exactly as it was.
  return transition.state === touched && transition.commands.length === 0 ? unchanged(state) : transition;
}

function apply(state: ThreadState, event: ConversationEvent): Transition {
  const { now } = event;
  switch (event.type) {
    case 'inputSubmitted':
      return submit(state, event.input, now, event.next_offset, { keepPartial: event.keep_partial === true });
    case 'inputRefused':
      return refuseInput(state, event.input, event.refusal, now, event.next_offset);
    case 'modelResponded':
      return modelResponded(state, event);
    case 'modelFailed':
      return modelFailed(state, event);
    case 'modelStopped':
      return modelStopped(state, event);
    case 'toolFinished':
      return afterToolStep(recordToolResult(state, event.run_id, event.tool_use_id, event.outcome, now), now);
    case 'toolFailed':
      return afterToolStep(
        recordToolFailure(state, event.run_id, event.tool_use_id, event.failure, now),
        now,
      );
    case 'approvalDecided':
      return afterToolStep(decideApproval(state, event.decision, now), now);
    case 'approvalExpired':
      return afterToolStep(expireApproval(state, event.approval_id, now), now);
    case 'limitsUpdated':
      return updateLimits(state, event.limits);
    case 'runDeleted':
      return deleteRun(state, event.run_id);
    case 'pushConfigSet':
      return setPushConfig(state, event.run_id, event.config);
    case 'pushConfigDeleted':
      return deletePushConfig(state, event.run_id, event.config_id);
    case 'metadataPatched':
      return patchMetadata(state, event.metadata);
    case 'cancelRequested':
      return cancelRun(
        state,
        event.run_id,
        now,
        { reason: 'cancelled_by_user', message: event.reason },
        { keepPartial: event.keep_partial === true },
      );
    case 'runDeferred':
      return deferRun(state, event.run_id, now);
    case 'closeRequested':
      return closeThread(state, now, event.reason, { keepPartial: event.keep_partial === true });
    case 'childUsageReported':
      return childUsageReported(state, event.run_id, event.usage, now);
    case 'childStarted':
      return afterToolStep(childStarted(state, event), now);
    case 'childWaitExpired':
      return afterToolStep(childWaitExpired(state, event), now);
    case 'childCompleted':
      return afterToolStep(childCompleted(state, event), now);
    case 'parentReported':
      return closeThread(state, now, undefined);
  }
}

/** While the thread is free and a run waits, the oldest queued run starts with a model step. */
function settle(transition: Transition, now: number): Transition {
  let settled = transition;
  for (;;) {
    const started = startQueuedRun(settled.state, now);
    if (started === undefined) return settled;
    settled = beginModelStep(started.state, now, [...settled.commands, ...started.commands]);
  }
}
