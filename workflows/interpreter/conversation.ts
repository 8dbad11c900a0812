/**
 * The interpreter: feeds events into the reducer and carries out its commands (activities, child
 * agents, timers, stream events, cancellations, webhooks), feeding their results back as events.
 * It holds no decisions of its own: the switch in `#execute` is all it does.
 */
import type { ChildCompleted } from '../../common/children';
import { reduce } from '../core/reducer';
import type { ThreadState } from '../core/state';
import type { Command, EventInput } from '../core/transitions';
import { resumeCommands } from '../core/views';
import { callModel, runTool, sendWebhook } from './activity-calls';
import { ApprovalTimers } from './approval-timers';
import { ChildAgents, reportToParent } from './children';
import { registerHandlers, type HandlerHost } from './handlers';
import { settleQuota } from './quota';
import { InFlight } from './in-flight';
import { observeTransition } from './metrics';
import { OperatorView } from './operator-view';
import type { Patches } from './patches';
import type { EventLog } from './stream';

export interface ConversationOptions {
  /** The run's patch decisions, made as it started. */
  patches: Patches;
  /** Started as another workflow's agent: it closes once its runs are done (task.ts). */
  task: boolean;
}

export class Conversation implements HandlerHost {
  #state: ThreadState;
  readonly stream: EventLog;
  readonly #inFlight = new InFlight();
  /** Settlements with a quota ledger not yet sent: a workflow that ends first would drop them. */
  #settling = 0;
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
    this.stream = stream;
    this.patches = patches;
    this.#view = new OperatorView({ patches, task });
  }

  get state(): ThreadState {
    return this.#state;
  }
  get inFlight(): number {
    return this.#inFlight.count;
  }
  /** True when nothing is in flight, so the state alone says what to do next. */
  get quiescent(): boolean {
    return this.#inFlight.count === 0;
  }
  /**
   * True while a run's settlement with its quota ledger is being sent (decision 0480): the workflow
   * waits for it before completing, since a signal not yet sent then is dropped.
   */
  get settling(): boolean {
    return this.#settling > 0;
  }
  get draining(): boolean {
    return this.#draining;
  }
  get releasingWaiters(): boolean {
    return this.#releasingWaiters;
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

  readonly dispatch = (event: EventInput): void => {
    const before = this.#state;
    const now = Date.now();
    const transition = reduce(before, { ...event, now });
    this.#state = transition.state;
    observeTransition(before, transition.commands, now);
    for (const command of transition.commands) this.#execute(command);
    this.#view.publish(this.#state);
  };

  #execute(command: Command): void {
    switch (command.type) {
      case 'emit':
        // A published event may complete a client's poll of the log in this very task: a run from
        // before the live channel (decision 0340) never announced its model calls, and on replay
        // must not (the same patch as a Stop that keeps what was said: both came in one release).
        if (command.event.event === 'message.started' && !this.patches.askStopKeepsPartial()) return;
        return this.stream.publish(command.event);
      case 'callModel':
        return this.#inRun(command, () =>
          callModel(command, this.#state.totals.runs + 1, this.patches, this.dispatch),
        );
      case 'runTool':
        return this.#inRun(command, () => runTool(command, this.patches, this.dispatch));
      case 'startChild':
        return this.#inRun(command, () => this.#children.start(command));
      case 'cancelActivities':
        return this.#inFlight.cancelRun(command.run_id);
      case 'startApprovalTimer':
        return this.#timers.start(command.approval_id, command.expires_at_ms);
      case 'cancelApprovalTimer':
        return this.#timers.cancel(command.approval_id);
      case 'reportToParent':
        return reportToParent(this, command);
      case 'settleQuota':
        // Outside the run's scope, as a webhook: a cancelled run settles too.
        this.#settling++;
        return this.#inFlight.outsideRuns(async () => {
          try {
            await settleQuota(command);
          } finally {
            this.#settling--;
          }
        });
      case 'sendWebhook':
        // A run from before A2A's input-required pushes never sent one, and on replay must not.
        if (command.gate === 'inputRequiredPush' && !this.patches.askA2aPushInputRequired()) return;
        // Outside the run's scope: a cancelled run still gets its webhook.
        return this.#inFlight.outsideRuns(() => sendWebhook(command.delivery));
    }
  }

  /** An activity or child of a run, in the run's cancellation scope; none starts while draining. */
  #inRun({ run_id }: { run_id: string }, work: () => Promise<void>): void {
    if (!this.#draining) this.#inFlight.inRun(run_id, work);
  }
}
