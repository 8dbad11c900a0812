/** The workflow's handlers for human checkpoints and budgets: thin, the reducer decides. */
import { ApplicationFailure, log, setHandler, upsertMemo } from '@temporalio/workflow';
import * as messages from '../common/messages';
import type { DecideApprovalInput, PendingApproval, UpdateLimitsInput } from '../common/approvals';
import { pendingApprovals, validateDecision } from './approvals';
import { validateLimits } from './budget';
import { isTerminal } from '../common/run';
import { findRun, type ConversationState } from './state';
import type { ConversationEvent } from './transitions';
import { toThread } from './views';

export interface CheckpointHost {
  readonly state: ConversationState;
  dispatch(
    event:
      | Omit<Extract<ConversationEvent, { type: 'approvalDecided' }>, 'now'>
      | Omit<Extract<ConversationEvent, { type: 'limitsUpdated' }>, 'now'>
      | Omit<Extract<ConversationEvent, { type: 'metadataPatched' }>, 'now'>
      | Omit<Extract<ConversationEvent, { type: 'runDeleted' }>, 'now'>,
  ): void;
}

export function registerCheckpointHandlers(host: CheckpointHost): void {
  setHandler(
    messages.decideApprovalUpdate,
    (decision) => {
      const approval = pendingApprovals(host.state).find((a) => a.approval_id === decision.approval_id)!;
      host.dispatch({ type: 'approvalDecided', decision });
      return approval satisfies PendingApproval;
    },
    {
      validator: (decision: DecideApprovalInput) => {
        const rejection = validateDecision(host.state, decision);
        if (rejection !== undefined) throw ApplicationFailure.create({ ...rejection, nonRetryable: true });
      },
    },
  );
  setHandler(messages.approvalSignal, (decision) => {
    const rejection = validateDecision(host.state, decision);
    if (rejection !== undefined) log.warn('approval signal ignored', { ...rejection });
    else host.dispatch({ type: 'approvalDecided', decision });
  });
  setHandler(
    messages.updateLimitsUpdate,
    (limits) => {
      host.dispatch({ type: 'limitsUpdated', limits });
      return toThread(host.state);
    },
    {
      validator: (limits: UpdateLimitsInput) => {
        const message = validateLimits(limits);
        if (message !== undefined)
          throw ApplicationFailure.create({ type: 'InvalidInput', message, nonRetryable: true });
      },
    },
  );
  setHandler(messages.patchMetadataUpdate, ({ metadata }) => {
    host.dispatch({ type: 'metadataPatched', metadata });
    upsertMemo({ metadata: host.state.thread.metadata });
    return toThread(host.state);
  });
  setHandler(messages.deleteRunUpdate, ({ run_id }) => host.dispatch({ type: 'runDeleted', run_id }), {
    validator: ({ run_id }: messages.RunRef) => {
      const run = findRun(host.state, run_id);
      if (run === undefined)
        throw ApplicationFailure.create({
          type: 'RunNotFound',
          message: `no run ${run_id} on this thread`,
          nonRetryable: true,
        });
      if (!isTerminal(run.status))
        throw ApplicationFailure.create({
          type: 'RunActive',
          message: `run ${run_id} is ${run.status}; cancel it before deleting it`,
          nonRetryable: true,
        });
    },
  });
  setHandler(messages.getPendingApprovalsQuery, () => pendingApprovals(host.state));
}
