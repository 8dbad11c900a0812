/**
 * `quotaWorkflow`: one per owner, the ledger of their quota (decision 0440). Runs are admitted by
 * update (the API's, before the run reaches its thread) and settled by signal (the thread's, as
 * the run ends); the owner reads it by query. It lives as long as the owner does, handing its
 * ledger over to a new run of itself when the history grows long.
 */
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { admitRunUpdate, getQuotaQuery, settleRunSignal } from '../common/quota';
import { admitRun, emptyLedger, quotaView, settleRun, type LedgerState } from '../common/quota-ledger';

export interface QuotaWorkflowInput {
  /** The ledger carried over continue-as-new. */
  ledger?: LedgerState;
}

export async function quotaWorkflow({ ledger }: QuotaWorkflowInput = {}): Promise<void> {
  let state = ledger ?? emptyLedger(Date.now());
  setHandler(admitRunUpdate, (input) => {
    const admitted = admitRun(state, input, Date.now());
    state = admitted.state;
    return admitted.admission;
  });
  setHandler(settleRunSignal, (input) => {
    state = settleRun(state, input, Date.now());
  });
  setHandler(getQuotaQuery, (limits) => quotaView(state, limits, Date.now()));
  await condition(() => workflowInfo().continueAsNewSuggested);
  await condition(allHandlersFinished);
  await continueAsNew<typeof quotaWorkflow>({ ledger: state });
}
