/**
 * The interpreter: feeds events into the reducer and turns its commands into activities, stream
 * events and cancellations. It holds no decisions of its own.
 */
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  log,
  patched,
  workflowInfo,
} from '@temporalio/workflow';
import type { KeelActivities, SendWebhookInput } from '../../common/activities';
import { spawnAgentToolName } from '../../common/children';
import { FailureType, isFailureType } from '../../common/failures';
import * as messages from '../../common/messages';
import { isTerminal } from '../../common/run';
import { searchAttributes } from '../../common/search-attributes';
import { describeFailure, modelCallOptions, toolCallOptions, webhookOptions } from './activity-options';
import { ChildAgents, reportToParent } from './children';
import { ApprovalTimers } from './approval-timers';
import { registerCheckpointHandlers } from './handlers';
import { isCurrentModelStep, reduce } from '../core/reducer';
import { activeRunStatuses } from '../core/run-index';
import type { ConversationState } from '../core/state';
import { findRun, threadStatus } from '../core/state';
import type { EventLog } from './stream';
import { summarizeModelCall, summarizeToolCall } from '../core/summaries';
import { modelMessages } from '../core/transcript';
import type { Command, EventInput } from '../core/transitions';
import { isValidRunId, validateSubmit, type Rejection } from '../core/validate';
import { innermostMessage, urlForLogs } from '../../common/urls';
import { webhookDeliveries } from '../core/webhooks';
import { currentDetails, resumeCommands, toThread } from '../core/views';

const activities = proxyActivities<KeelActivities>(modelCallOptions);

/** Since this patch the KeelCostUsd search attribute is written per run, not per model call. */
export const costAttributePerRunPatch = 'keel-cost-attribute-per-run';
/** Since this patch a signalled input the thread refuses becomes a failed run, not a log line. */
export const refusedInputRunPatch = 'keel-refused-input-run';

export class Conversation {
  #state: ConversationState;
  readonly #stream: EventLog;
  readonly #scopes = new Map<string, CancellationScope>();
  #inFlight = 0;
  /** Set while handing off to continue-as-new: activity commands wait for the next run. */
  #draining = false;
  /** Set when the workflow is about to end or continue as new: `awaitRun` callers are answered now. */
  #releasingWaiters = false;
  #attributes = '';
  readonly #children = new ChildAgents({
    state: () => this.#state,
    dispatch: (event) => this.dispatch(event),
    publish: (event) => this.#stream.publish(event),
  });
  readonly #timers = new ApprovalTimers((approval_id) =>
    this.dispatch({ type: 'approvalExpired', approval_id }),
  );

  constructor(state: ConversationState, stream: EventLog) {
    this.#state = state;
    this.#stream = stream;
  }

  get state(): ConversationState {
    return this.#state;
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

  /** Re-issues what the state implies (after continue-as-new) and publishes the operator view. */
  resume(): void {
    for (const command of resumeCommands(this.#state)) this.#execute(command);
    this.#publishOperatorView();
  }

  dispatch(event: EventInput): void {
    const transition = reduce(this.#state, { ...event, now: Date.now() });
    this.#state = transition.state;
    for (const command of transition.commands) this.#execute(command);
    for (const delivery of webhookDeliveries(transition.commands)) this.#sendWebhook(delivery);
    reportToParent(this.#state, transition.commands, () => this.dispatch({ type: 'closeRequested' }));
    this.#publishOperatorView();
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
        log.warn('webhook not delivered', {
          webhook_id: delivery.webhook_id,
          url: urlForLogs(delivery.url),
          // An error object would be logged as `{"cause": {}}`; its reason is what helps.
          error: innermostMessage(error),
        }),
      )
      .finally(() => {
        this.#inFlight--;
      });
  }

  registerHandlers(): void {
    const reject = (rejection: Rejection | undefined): void => {
      if (rejection !== undefined) throw ApplicationFailure.create({ ...rejection, nonRetryable: true });
    };
    const requireRun = ({ run_id }: messages.RunRef): void => {
      if (findRun(this.#state, run_id) === undefined)
        reject({ type: 'RunNotFound', message: `no run ${run_id} on this thread` });
    };
    setHandler(
      messages.submitInputUpdate,
      (input) => {
        this.dispatch({ type: 'inputSubmitted', input, next_offset: this.#stream.nextOffset() });
        return findRun(this.#state, input.run_id)!;
      },
      { validator: (input: messages.SubmitInput) => reject(validateSubmit(this.#state, input)) },
    );
    setHandler(
      messages.deferRunUpdate,
      ({ run_id }) => {
        this.dispatch({ type: 'runDeferred', run_id });
        return findRun(this.#state, run_id)!;
      },
      { validator: requireRun },
    );
    setHandler(
      messages.requestCancelUpdate,
      ({ run_id, reason }) => {
        this.dispatch({ type: 'cancelRequested', run_id, ...(reason === undefined ? {} : { reason }) });
        return findRun(this.#state, run_id)!;
      },
      { validator: requireRun },
    );
    setHandler(
      messages.awaitRunUpdate,
      async ({ run_id, timeout_ms }) => {
        const over = () =>
          this.#releasingWaiters || isTerminal(findRun(this.#state, run_id)?.status ?? 'completed');
        if (timeout_ms === undefined) await condition(over);
        else await condition(over, Math.max(1, timeout_ms));
        return findRun(this.#state, run_id)!;
      },
      { validator: requireRun },
    );
    setHandler(messages.userMessageSignal, (input) => this.#takeSignalledInput(input));
    setHandler(messages.cancelRunSignal, ({ run_id, reason }) =>
      this.dispatch({ type: 'cancelRequested', run_id, ...(reason === undefined ? {} : { reason }) }),
    );
    setHandler(messages.childCompletedSignal, (report) => this.#children.onCompleted(report));
    setHandler(messages.closeSignal, ({ reason }) =>
      this.dispatch({ type: 'closeRequested', ...(reason === undefined ? {} : { reason }) }),
    );
    registerCheckpointHandlers(this);
    setHandler(messages.getThreadQuery, () => toThread(this.#state));
    setHandler(messages.getRunQuery, ({ run_id }) => findRun(this.#state, run_id) ?? null);
    setHandler(messages.listRunsQuery, ({ limit }) => [...this.#state.runs].reverse().slice(0, limit ?? 100));
    setHandler(messages.getStreamBaseQuery, () => this.#stream.baseOffset);
    setHandler(messages.getStepMessagesQuery, ({ run_id, step }) => this.#stepMessages(run_id, step));
    // The older form, which fails instead (model activities of earlier releases ask it).
    setHandler(messages.getModelMessagesQuery, ({ run_id, step }) => {
      const answer = this.#stepMessages(run_id, step);
      if (!answer.current) throw ApplicationFailure.create({ ...answer, nonRetryable: true });
      return answer.messages;
    });
    setHandler(messages.getTranscriptQuery, ({ after, limit }) => {
      const start = Math.max(0, (after ?? 0) - this.#state.compacted_messages);
      return this.#state.transcript.slice(start, limit === undefined ? undefined : start + limit);
    });
    setHandler(messages.getStateQuery, () => {
      const info = workflowInfo();
      return {
        state: this.#state as unknown as Record<string, unknown>,
        in_flight_activities: this.#inFlight,
        draining: this.#draining,
        workflow_run_id: info.runId,
        history_length: info.historyLength,
        history_size: info.historySize,
        continue_as_new_suggested: info.continueAsNewSuggested,
      };
    });
  }

  #stepMessages(runId: string, step: number): messages.StepMessages {
    if (isCurrentModelStep(this.#state, runId, step))
      return { current: true, messages: modelMessages(this.#state) };
    const type = FailureType.modelStepNotCurrent;
    return {
      current: false,
      type,
      message: `${type}: step ${step} of run ${runId} is not the current model step`,
    };
  }

  /**
   * Input that arrived as a signal: written to history whether or not a worker was alive, so it
   * is never refused at the door. The same run id again (a retry, or its update won the race) is
   * a no-op; input the thread's rules refuse becomes a failed run that says why.
   */
  #takeSignalledInput(input: messages.SubmitInput): void {
    if (findRun(this.#state, input.run_id) !== undefined) return;
    const next_offset = this.#stream.nextOffset();
    const rejection = validateSubmit(this.#state, input);
    if (rejection === undefined) this.dispatch({ type: 'inputSubmitted', input, next_offset });
    else if (isValidRunId(input.run_id) && patched(refusedInputRunPatch))
      this.dispatch({ type: 'inputRefused', input, refusal: rejection, next_offset });
    else log.warn('userMessage signal ignored', { ...rejection });
  }

  #execute(command: Command): void {
    switch (command.type) {
      case 'emit':
        this.#stream.publish(command.event);
        return;
      case 'cancelActivities':
        this.#scopes.get(command.run_id)?.cancel();
        this.#scopes.delete(command.run_id);
        return;
      case 'callModel':
        if (!this.#draining) this.#track(command.run_id, () => this.#callModel(command));
        return;
      case 'runTool':
        if (this.#draining) return;
        if (command.use.name === spawnAgentToolName)
          this.#track(command.run_id, () => this.#children.spawn(command));
        else this.#track(command.run_id, () => this.#runTool(command));
        return;
      case 'startApprovalTimer':
        this.#timers.start(command.approval_id, command.expires_at_ms);
        return;
      case 'cancelApprovalTimer':
        this.#timers.cancel(command.approval_id);
        return;
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

  async #callModel({ run_id: runId, step, input }: Extract<Command, { type: 'callModel' }>): Promise<void> {
    const summary = summarizeModelCall(input.model, this.#state.totals.runs + 1, step);
    try {
      const result = await activities.callModel.executeWithOptions({ ...modelCallOptions, summary }, [input]);
      this.dispatch({ type: 'modelResponded', run_id: runId, step, result });
    } catch (error) {
      if (isCancellation(error)) throw error;
      const facts = describeFailure(error);
      const type = isFailureType(facts.type) ? facts.type : 'InternalError';
      this.dispatch({ type: 'modelFailed', run_id: runId, step, error: { type, message: facts.message } });
    }
  }

  async #runTool({ use, flags, run_id, input }: Extract<Command, { type: 'runTool' }>): Promise<void> {
    const options = { ...toolCallOptions(flags), summary: summarizeToolCall(use) };
    let finished: EventInput;
    try {
      const outcome = await activities.runTool.executeWithOptions(options, [input]);
      finished = { type: 'toolFinished', run_id, tool_use_id: use.id, outcome };
    } catch (error) {
      if (isCancellation(error)) throw error;
      const { message, timedOut } = describeFailure(error);
      const failure = { message, interrupted: timedOut };
      finished = { type: 'toolFailed', run_id, tool_use_id: use.id, failure };
    }
    this.dispatch(finished);
  }

  #publishOperatorView(): void {
    setCurrentDetails(currentDetails(this.#state));
    const status = threadStatus(this.#state);
    const values = {
      status,
      cost: this.#state.usage.cost_usd,
      turns: this.#state.totals.runs,
      model: this.#state.thread.config.model,
      runStatuses: activeRunStatuses(this.#state),
    };
    // Cost changes with every model call; it is written with the next change of the others (a
    // run starting or ending), so a step costs no visibility write. Current details show it live.
    // Histories from before this wrote it on every change, and keep doing so on replay.
    const perRun = patched(costAttributePerRunPatch);
    const key = JSON.stringify(perRun ? { ...values, cost: undefined } : values);
    if (key === this.#attributes) return;
    this.#attributes = key;
    upsertSearchAttributes([
      { key: searchAttributes.status, value: values.status },
      { key: searchAttributes.costUsd, value: values.cost },
      { key: searchAttributes.turns, value: values.turns },
      { key: searchAttributes.model, value: values.model },
      { key: searchAttributes.runStatuses, value: values.runStatuses },
    ]);
  }
}
