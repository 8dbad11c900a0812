/**
 * The interpreter: feeds events into the reducer and carries out its commands (activities, child
 * agents, timers, stream events, cancellations), feeding their results back as events. It holds
 * no decisions of its own: the switch in `#execute` is all it does.
 */
import {
  CancellationScope,
  isCancellation,
  log,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';
import type { KeelActivities, SendWebhookInput } from '../../common/activities';
import type { ChildCompleted } from '../../common/children';
import { isFailureType } from '../../common/failures';
import { innermostMessage, urlForLogs } from '../../common/urls';
import { reduce } from '../core/reducer';
import type { ThreadState } from '../core/state';
import { summarizeModelCall, summarizeToolCall } from '../core/summaries';
import type { Command, EventInput } from '../core/transitions';
import { resumeCommands } from '../core/views';
import { webhookDeliveries } from '../core/webhooks';
import {
  describeFailure,
  localModelCallOptions,
  modelCallOptions,
  toolCallOptions,
  webhookOptions,
} from './activity-options';
import { ApprovalTimers } from './approval-timers';
import { ChildAgents, reportToParent } from './children';
import { registerHandlers, type HandlerHost } from './handlers';
import { observeTransition } from './metrics';
import { OperatorView } from './operator-view';
import type { Patches } from './patches';
import type { EventLog } from './stream';

export { costAttributePerRunPatch } from './operator-view';
export { refusedInputRunPatch } from './handlers';

const activities = proxyActivities<KeelActivities>(modelCallOptions);
const localActivities = proxyLocalActivities<KeelActivities>(localModelCallOptions);

/** Since this patch a model call that streams no deltas runs as a local activity. */
export const localModelCallPatch = 'keel-model-call-local';

type Of<T extends Command['type']> = Extract<Command, { type: T }>;

export interface ConversationOptions {
  /** The run's patch decisions, made as it started. */
  patches: Patches;
  /** Started as another workflow's agent: it closes once its runs are done (task.ts). */
  task: boolean;
}

export class Conversation implements HandlerHost {
  #state: ThreadState;
  readonly #stream: EventLog;
  readonly #scopes = new Map<string, CancellationScope>();
  #inFlight = 0;
  /** Set while handing off to continue-as-new: activity commands wait for the next run. */
  #draining = false;
  /** Set when the workflow is about to end or continue as new: `awaitRun` callers are answered now. */
  #releasingWaiters = false;
  readonly #view: OperatorView;
  readonly patches: Patches;
  readonly #children = new ChildAgents(this);
  readonly #timers = new ApprovalTimers((approval_id) =>
    this.dispatch({ type: 'approvalExpired', approval_id }),
  );

  constructor(state: ThreadState, stream: EventLog, { patches, task }: ConversationOptions) {
    this.#state = state;
    this.#stream = stream;
    this.patches = patches;
    this.#view = new OperatorView({ patches, task });
  }

  get state(): ThreadState {
    return this.#state;
  }
  get inFlight(): number {
    return this.#inFlight;
  }
  get draining(): boolean {
    return this.#draining;
  }
  get releasingWaiters(): boolean {
    return this.#releasingWaiters;
  }
  get baseOffset(): number {
    return this.#stream.baseOffset;
  }
  nextOffset(): number {
    return this.#stream.nextOffset();
  }
  /** True when no activity is in flight, so the state alone says what to do next. */
  get quiescent(): boolean {
    return this.#inFlight === 0;
  }

  beginDraining(): void {
    this.#draining = true;
  }

  /** Answers every pending `awaitRun` with the run as it is, so the workflow can end or hand over. */
  releaseWaiters(): void {
    this.#releasingWaiters = true;
  }

  registerHandlers(): void {
    registerHandlers(this);
  }

  /** A child agent's report (the `childCompleted` signal). */
  childReported(report: ChildCompleted): void {
    this.#children.onReport(report);
  }

  /**
   * Re-issues what the state implies (after continue-as-new) and publishes the operator view:
   * since the lean-history patch, only its current details for a `fresh` run (no carried state),
   * whose starter set its search attributes and whose first event writes them.
   */
  resume({ fresh }: { fresh: boolean }): void {
    for (const command of resumeCommands(this.#state, Date.now())) this.#execute(command);
    this.#view.publish(this.#state, { visibility: !(fresh && this.patches.lean) });
  }

  dispatch(event: EventInput): void {
    const before = this.#state;
    const now = Date.now();
    const transition = reduce(before, { ...event, now });
    this.#state = transition.state;
    observeTransition(before, transition.commands, now);
    for (const command of transition.commands) this.#execute(command);
    for (const delivery of webhookDeliveries(transition.commands)) this.#sendWebhook(delivery);
    this.#view.publish(this.#state);
  }

  #execute(command: Command): void {
    switch (command.type) {
      case 'emit':
        return this.#stream.publish(command.event);
      case 'cancelActivities':
        this.#scopes.get(command.run_id)?.cancel();
        this.#scopes.delete(command.run_id);
        return;
      case 'callModel':
        if (!this.#draining) this.#track(command.run_id, () => this.#callModel(command));
        return;
      case 'runTool':
        if (!this.#draining) this.#track(command.run_id, () => this.#runTool(command));
        return;
      case 'startChild':
        if (!this.#draining) this.#track(command.run_id, () => this.#children.start(command));
        return;
      case 'reportToParent':
        return reportToParent(this, command);
      case 'startApprovalTimer':
        return this.#timers.start(command.approval_id, command.expires_at_ms);
      case 'cancelApprovalTimer':
        return this.#timers.cancel(command.approval_id);
    }
  }

  /** Runs an activity inside its run's cancellation scope, counting it as in flight. */
  #track(runId: string, work: () => Promise<void>): void {
    let scope = this.#scopes.get(runId);
    if (scope === undefined) {
      scope = new CancellationScope();
      this.#scopes.set(runId, scope);
    }
    this.#inFlight++;
    scope
      .run(work)
      .catch((error: unknown) => {
        // A cancelled run's activities end here; the reducer already finished the run.
        if (!isCancellation(error)) throw error;
      })
      .finally(() => {
        this.#inFlight--;
      });
  }

  async #callModel({ run_id, step, input }: Of<'callModel'>): Promise<void> {
    const summary = summarizeModelCall(input.model, this.#state.totals.runs + 1, step);
    try {
      const result =
        input.deltas === false && this.patches.folded(localModelCallPatch)
          ? await localActivities.callModel.executeWithOptions({ ...localModelCallOptions, summary }, [input])
          : await activities.callModel.executeWithOptions({ ...modelCallOptions, summary }, [input]);
      this.dispatch({ type: 'modelResponded', run_id, step, result });
    } catch (error) {
      if (isCancellation(error)) throw error;
      const facts = describeFailure(error);
      const type = isFailureType(facts.type) ? facts.type : 'InternalError';
      this.dispatch({ type: 'modelFailed', run_id, step, error: { type, message: facts.message } });
    }
  }

  async #runTool({ use, flags, run_id, input }: Of<'runTool'>): Promise<void> {
    const options = { ...toolCallOptions(flags), summary: summarizeToolCall(use) };
    let finished: EventInput;
    try {
      const outcome = await activities.runTool.executeWithOptions(options, [input]);
      finished = { type: 'toolFinished', run_id, tool_use_id: use.id, outcome };
    } catch (error) {
      if (isCancellation(error)) throw error;
      const { message, timedOut } = describeFailure(error);
      finished = {
        type: 'toolFailed',
        run_id,
        tool_use_id: use.id,
        failure: { message, interrupted: timedOut },
      };
    }
    this.dispatch(finished);
  }

  /**
   * Outside every run's cancellation scope (a cancelled run still gets its webhook), but counted
   * as in flight so continue-as-new waits for the delivery.
   */
  #sendWebhook(delivery: SendWebhookInput): void {
    this.#inFlight++;
    CancellationScope.nonCancellable(() =>
      activities.sendWebhook.executeWithOptions(
        { ...webhookOptions, summary: `webhook ${delivery.payload.type}` },
        [delivery],
      ),
    )
      .catch((error: unknown) =>
        // An error object would be logged as `{"cause": {}}`; its reason is what helps.
        log.warn('webhook not delivered', {
          webhook_id: delivery.webhook_id,
          url: urlForLogs(delivery.url),
          error: innermostMessage(error),
        }),
      )
      .finally(() => {
        this.#inFlight--;
      });
  }
}
