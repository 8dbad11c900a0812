/**
 * Owner quotas at the API's door (decision 0440): before a run reaches its thread, the owner's
 * ledger (`quotaWorkflow`, one per owner) admits it with a slot and a share of what the day and
 * the month have left, or refuses it: 429 `concurrency_limit` or `quota_exceeded`, with
 * `Retry-After`. Nothing has reached a model then. The run carries its share to its thread, which
 * makes it one more ceiling on its calls and settles it with the ledger as the run ends.
 */
import { WithStartWorkflowOperation, type Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { emptyLedger, quotaView } from '../../common/quota-ledger';
import {
  admitRunUpdate,
  getQuotaQuery,
  hasQuota,
  quotaKey,
  quotaWorkflowId,
  settleRunSignal,
  type QuotaLimits,
  type QuotaView,
  type RunQuota,
} from '../../common/quota';
import { scopeOf } from '../../common/thread';
import type { quotaWorkflow } from '../../workflows/quota-workflow';
import { ApiError } from '../errors';
import { isStall } from '../gateway/intake';
import type { ThreadRef } from '../threads/thread-ref';

/** How long an admission or a read of the ledger may take before the caller hears 503. */
const ledgerWithinMs = 15_000;

/** Why a run was refused before it started: the reasons the refusal metric counts. */
export type DoorRefusal = 'quota_exceeded' | 'concurrency';

export class OwnerQuotas {
  constructor(
    private readonly client: Client,
    private readonly limits: QuotaLimits,
    private readonly taskQueue: string,
    private readonly refused: (reason: DoorRefusal) => void = () => undefined,
  ) {}

  get enabled(): boolean {
    return hasQuota(this.limits);
  }

  /**
   * The run's claim on its owner's quota, or undefined without a quota. The ledger is the one
   * the thread's own id names, so the thread settles with the ledger that admitted it.
   */
  async admit(thread: ThreadRef, runId: string): Promise<RunQuota | undefined> {
    if (!this.enabled) return undefined;
    const ledger = quotaWorkflowId(scopeOf(thread.workflow_id));
    const startWorkflowOperation = new WithStartWorkflowOperation<typeof quotaWorkflow>('quotaWorkflow', {
      workflowId: ledger,
      taskQueue: this.taskQueue,
      args: [{}],
      workflowIdConflictPolicy: 'USE_EXISTING',
    });
    const admission = await this.#bounded(() =>
      this.client.workflow.executeUpdateWithStart(admitRunUpdate, {
        args: [{ key: quotaKey(thread.workflow_id, runId), limits: this.limits }],
        startWorkflowOperation,
      }),
    );
    if (!admission.admitted) {
      this.refused(admission.reason);
      throw new ApiError(
        429,
        admission.reason === 'concurrency' ? 'concurrency_limit' : 'quota_exceeded',
        admission.message,
        undefined,
        admission.retry_after_s,
      );
    }
    return admission.cost_usd === undefined ? {} : { cost_usd: admission.cost_usd };
  }

  /** A run admitted that never reached its thread (the thread refused it): its slot is freed. */
  async release(thread: ThreadRef, runId: string): Promise<void> {
    if (!this.enabled) return;
    await this.client.workflow
      .getHandle(quotaWorkflowId(scopeOf(thread.workflow_id)))
      .signal(settleRunSignal, { key: quotaKey(thread.workflow_id, runId), billed_usd: 0 });
  }

  /** The owner's quota as it stands (`scope`: the owner's thread-id scope, none for the install's). */
  async view(scope: string | undefined): Promise<QuotaView> {
    const handle = this.client.workflow.getHandle(quotaWorkflowId(scope));
    try {
      return await this.#bounded(() => handle.query(getQuotaQuery, this.limits));
    } catch (error) {
      // No run was ever admitted: nothing spent, nothing held.
      if (error instanceof WorkflowNotFoundError)
        return quotaView(emptyLedger(Date.now()), this.limits, Date.now());
      throw error;
    }
  }

  async #bounded<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await this.client.withDeadline(Date.now() + ledgerWithinMs, call);
    } catch (error) {
      if (!isStall(error)) throw error;
      throw new ApiError(
        503,
        'quota_unavailable',
        "the owner's quota ledger did not answer in time; retry shortly",
      );
    }
  }
}
