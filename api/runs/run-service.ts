/**
 * Runs as the API serves them: submitting one (idempotent by `run_id`), reading and listing runs,
 * cancelling, deferring, deciding their approvals, and A2A push configs. Input goes through the
 * gateway's intake (update, then signal), reads through its deadlines (api/gateway/).
 */
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { PushConfig } from '../../common/a2a-push';
import type { DecideApprovalInput, PendingApproval } from '../../common/approvals';
import * as messages from '../../common/messages';
import type { Run } from '../../common/run';
import type { KeelConfig } from '../../platform/config';
import { checkOutboundUrl, RefusedUrl, UnresolvedHost } from '../../platform/outbound-address';
import type { NewConversation } from '../../workflows/interpreter/workflow';
import { ApiError } from '../errors';
import type { Delivery } from '../gateway/intake';
import type { RunIntake, Submitted } from '../gateway/run-intake';
import type { ThreadGateway } from '../gateway/thread-gateway';
import type { ThreadRef } from '../threads/thread-ref';

/** What the run service needs of the configuration. */
export type RunServiceConfig = Pick<KeelConfig, 'webhookAllowHosts'> & {
  api: Pick<KeelConfig['api'], 'localModelCalls'>;
};

export class RunService {
  readonly #gateway: ThreadGateway;
  readonly #intake: RunIntake;

  constructor(
    gateway: ThreadGateway,
    intake: RunIntake,
    private readonly config: RunServiceConfig,
  ) {
    this.#gateway = gateway;
    this.#intake = intake;
  }

  /**
   * Submits a run (see `RunIntake.submitRun`). A `run_id` already on the thread returns that run:
   * creation is idempotent.
   */
  async submitRun(
    thread: ThreadRef,
    input: messages.SubmitInput,
    create: NewConversation | undefined,
    options: { wait?: boolean; deadline?: number } = {},
  ): Promise<Submitted> {
    try {
      return await this.#intake.submitRun(thread, input, create, options);
    } catch (error) {
      if (
        error instanceof WorkflowUpdateFailedError &&
        error.cause instanceof ApplicationFailure &&
        error.cause.type === 'RunExists'
      ) {
        return { run: await this.getRun(thread, input.run_id) };
      }
      throw error;
    }
  }

  /** Cancels a run; `queued` when the cancel went by signal (see `RunIntake.cancelRun`). */
  cancelRun(thread: ThreadRef, runId: string, reason: string | undefined): Promise<Delivery<Run>> {
    return this.#intake.cancelRun(thread, runId, reason);
  }

  /** Decides an approval; `queued` when the decision went by signal (see `RunIntake.decideApproval`). */
  decideApproval(thread: ThreadRef, decision: DecideApprovalInput): Promise<Delivery<PendingApproval>> {
    return this.#intake.decideApproval(thread, decision);
  }

  /** Marks the run `deferred`, its caller having stopped waiting (see `ThreadGateway.deferRun`). */
  deferRun(thread: ThreadRef, known: Run): Promise<Run> {
    return this.#gateway.deferRun(thread, known);
  }

  /** The run when the thread may be waiting on a human (see `ThreadGateway.peekInterruptedRun`). */
  peekInterruptedRun(thread: ThreadRef, runId: string, withinMs: number): Promise<Run | undefined> {
    return this.#gateway.peekInterruptedRun(thread, runId, withinMs);
  }

  /** Removes a finished run's record; its messages stay (409 `run_active` before it ends). */
  async deleteRun(thread: ThreadRef, runId: string): Promise<void> {
    await this.getRun(thread, runId);
    await this.#gateway.read(thread, () =>
      this.#gateway.update(thread, messages.deleteRunUpdate, { run_id: runId }),
    );
  }

  /**
   * Refuses (422) a webhook URL that leads to loopback, private, link-local or metadata addresses.
   * A name that does not resolve now is taken: delivery checks it again when it connects.
   */
  async checkWebhook(url: string): Promise<void> {
    try {
      await checkOutboundUrl(url, this.config.webhookAllowHosts);
    } catch (error) {
      if (error instanceof UnresolvedHost) return;
      if (!(error instanceof RefusedUrl)) throw error;
      throw new ApiError(
        422,
        'webhook_refused',
        `webhook ${error.message}; an operator can allow the host with KEEL_WEBHOOK_ALLOW_HOSTS`,
        'webhook',
      );
    }
  }

  /** Whether waited runs make their model calls as local activities (`KEEL_LOCAL_MODEL_CALLS`). */
  get localModelCalls(): boolean {
    return this.config.api.localModelCalls;
  }

  async getRun(thread: ThreadRef, runId: string): Promise<Run> {
    const run = await this.#gateway.read(thread, () =>
      this.#gateway.query(thread, messages.getRunQuery, { run_id: runId }),
    );
    if (run === null)
      throw new ApiError(404, 'run_not_found', `run ${runId} not found on thread ${thread.thread_id}`);
    return run;
  }

  /** Registers an A2A push notification config on an unfinished run (decision 0485). */
  setPushConfig(thread: ThreadRef, runId: string, config: PushConfig): Promise<PushConfig> {
    return this.#gateway.read(thread, () =>
      this.#gateway.update(thread, messages.setPushConfigUpdate, { run_id: runId, config }),
    );
  }

  /** A run's A2A push notification configs: none once it ended (they were delivered). */
  pushConfigs(thread: ThreadRef, runId: string): Promise<PushConfig[]> {
    return this.#gateway.read(thread, () =>
      this.#gateway.query(thread, messages.getPushConfigsQuery, { run_id: runId }),
    );
  }

  deletePushConfig(thread: ThreadRef, runId: string, configId: string): Promise<void> {
    return this.#gateway.read(thread, () =>
      this.#gateway.update(thread, messages.deletePushConfigUpdate, { run_id: runId, config_id: configId }),
    );
  }

  listRuns(thread: ThreadRef, limit: number): Promise<Run[]> {
    return this.#gateway.read(thread, () => this.#gateway.query(thread, messages.listRunsQuery, { limit }));
  }
}
