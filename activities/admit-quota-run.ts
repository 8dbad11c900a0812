/**
 * `admitQuotaRun`: a run that comes from a workflow, not through the API's door (a cron's fire,
 * an agent another workflow starts), is admitted by its owner's ledger as the API admits one
 * (decisions 0440, 0480). Workflow code can only signal another workflow; this activity, on
 * Keel's task queue, asks the ledger by update-with-start with the quota the worker is configured
 * with, and counts a refusal in `keel_refusals_total` as the API counts one at its door.
 */
import { Context } from '@temporalio/activity';
import { WithStartWorkflowOperation } from '@temporalio/client';
import {
  admitRunUpdate,
  hasQuota,
  type AdmitQuotaRunInput,
  type QuotaLimits,
  type QuotaRefusalReason,
  type QuotaRunAdmission,
} from '../common/quota';

export interface AdmitQuotaRunOptions {
  limits: QuotaLimits;
  refused: (reason: QuotaRefusalReason) => void;
}

export function createAdmitQuotaRun({ limits, refused }: AdmitQuotaRunOptions) {
  return async function admitQuotaRun({ ledger, key }: AdmitQuotaRunInput): Promise<QuotaRunAdmission> {
    if (!hasQuota(limits)) return { admitted: true };
    const context = Context.current();
    const startWorkflowOperation = new WithStartWorkflowOperation('quotaWorkflow', {
      workflowId: ledger,
      taskQueue: context.info.taskQueue,
      args: [{}],
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    // Asked again (a retried attempt), the ledger answers what it answered: a run is admitted once.
    const admission = await context.client.workflow.executeUpdateWithStart(admitRunUpdate, {
      args: [{ key, limits }],
      startWorkflowOperation,
    });
    if (!admission.admitted) {
      refused(admission.reason);
      const { reason, retry_after_s, message } = admission;
      return { admitted: false, reason, retry_after_s, message };
    }
    return {
      admitted: true,
      quota: admission.cost_usd === undefined ? {} : { cost_usd: admission.cost_usd },
    };
  };
}
