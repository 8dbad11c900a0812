/**
 * A run admitted against its owner's quota settles with the owner's ledger as it ends (decision
 * 0440): one signal to `quotaWorkflow`, which frees the run's slot and counts what it was billed;
 * its thread's owner's, or the workflow caller's that admitted it (decision 0480).
 */
import { getExternalWorkflowHandle, log, workflowInfo } from '@temporalio/workflow';
import { quotaKey, quotaWorkflowId, settleRunSignal } from '../../common/quota';
import { scopeOf } from '../../common/thread';
import type { Command } from '../core/transitions';

export async function settleQuota({
  run_id,
  billed_usd,
  ledger,
}: Extract<Command, { type: 'settleQuota' }>): Promise<void> {
  const { workflowId } = workflowInfo();
  try {
    // A run a workflow caller's quota admitted names that ledger (decision 0480): the thread owner's
    // ledger never gave it a slot, so settling there would free someone else's.
    await getExternalWorkflowHandle(ledger ?? quotaWorkflowId(scopeOf(workflowId))).signal(settleRunSignal, {
      key: quotaKey(workflowId, run_id),
      billed_usd,
    });
  } catch (error) {
    // The ledger gives the run's share up at its lease; nothing more can be done from here.
    log.warn('could not settle a run with its owner quota', { run_id, error });
  }
}
