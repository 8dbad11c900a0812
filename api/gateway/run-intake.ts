/**
 * Input to a thread, the durable way (intake.ts): by update, and by signal when the thread cannot
 * take it now. Runs (waiting or not, creating their thread or not), cancels and approval decisions
 * all go through here; with thread-gateway.ts it is the only code that holds the conversation
 * workflows' handles.
 */
import { LRUCache } from 'lru-cache';
import {
  WithStartWorkflowOperation,
  type WorkflowUpdateHandle,
  WorkflowUpdateStage,
} from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import type { DecideApprovalInput, PendingApproval } from '../../common/approvals';
import * as messages from '../../common/messages';
import { isTerminal, MultitaskStrategy, queuedRun, type Run } from '../../common/run';
import { searchAttributes } from '../../common/search-attributes';
import type { KeelConfig } from '../../platform/config';
import type { NewConversation, conversationWorkflow } from '../../workflows/interpreter/workflow';
import { ApiError } from '../errors';
import type { AskToBeat } from '../streams/live-beat';
import type { ThreadRef } from '../threads/thread-ref';
import { withCallSignal } from './call-signal';
import { deliver, FleetActivity, type Delivery } from './intake';
import { startOptions } from './start-options';
import type { ThreadGateway } from './thread-gateway';

/** A submitted run, and (for a caller that waits) the thread's answer at the run's end. */
export interface Submitted {
  run: Run;
  /** Present when the thread itself took a waiting submission; see `submitRun`. */
  settled?: (signal: AbortSignal) => Promise<Run>;
}

/** What the intake needs of the configuration, beyond the gateway's. */
export type IntakeConfig = Pick<KeelConfig, 'model'> & {
  api: Pick<KeelConfig['api'], 'waitValuesChars'>;
};

/** How many threads `#running` remembers. */
const runningKept = 10_000;

export class RunIntake {
  readonly #gateway: ThreadGateway;
  /** What came with a waited run's answer, by the very run object `settled` resolved with. */
  readonly #carried = new WeakMap<Run, messages.WaitedValues>();
  /** Whether threads are accepting waiting inputs right now (intake.ts). */
  readonly #fleet = new FleetActivity();
  /** Threads' workflows that accepted a waiting input through this API, most recent last. */
  readonly #running = new LRUCache<string, true>({ max: runningKept });

  constructor(
    gateway: ThreadGateway,
    private readonly config: IntakeConfig,
    /**
     * Asks the worker running a thread's model call to beat at once, after a Stop or an
     * interrupting input, so the cancel reaches the call at once, not at its next slow beat
     * (decision 0420). @default none: the call's own beat carries the cancel
     */
    private readonly askToBeat?: AskToBeat,
  ) {
    this.#gateway = gateway;
  }

  /** Whether the thread's workflow accepted a waiting input through this API since it was last found ended. */
  tookInput(thread: ThreadRef): boolean {
    return this.#running.has(thread.workflow_id);
  }

  /** What a waited run's answer carried (decision 0255), by the run `settled` resolved with. */
  carriedWith(run: Run): messages.WaitedValues | undefined {
    return this.#carried.get(run);
  }

  /** Hands input to the thread by update, or by signal when it cannot take it now (see intake.ts). */
  #deliver<T>(
    byUpdate: () => Promise<T>,
    bySignal: () => Promise<void>,
    holdSignal?: () => Promise<number>,
  ): Promise<Delivery<T>> {
    const answerWithinMs = this.#gateway.config.api.intakeWaitMs;
    const timings = { signalAfterMs: Math.min(250, Math.floor(answerWithinMs / 3)), answerWithinMs };
    return deliver({
      client: this.#gateway.client,
      timings,
      byUpdate,
      bySignal,
      ...(holdSignal === undefined ? {} : { holdSignal }),
    });
  }

  /**
   * Submits a run. A `run_id` already on the thread fails as `RunExists` (the run service answers
   * with that run); with `create` a missing thread is created in the same call. When the thread cannot take the
   * input at once, it is written to the thread's history by signal and answered as `queued`.
   *
   * With `wait`, the same update also answers once the run is over or waits on a human: the
   * input counts as taken once the thread accepted it, `settled` then resolves with the run's
   * answer (unfinished when the thread handed over first, or answered without waiting: a worker
   * of an earlier release). One update for a `runs/wait`, no second one to await the run.
   */
  async submitRun(
    thread: ThreadRef,
    input: messages.SubmitInput,
    create: NewConversation | undefined,
    { wait = false, deadline = Infinity }: { wait?: boolean; deadline?: number } = {},
  ): Promise<Submitted> {
    if (wait) {
      // The thread's acceptance is awaited while a worker holds its task, but never past the
      // caller's own deadline: then the input goes by signal, durable before the caller hears.
      const submitted = Date.now();
      const holdSignal = async () => {
        // Queued behind a busy fleet: held without asking (decision 0300), since a description would
        // show a task no worker holds yet, sending the input by signal onto the slow path; else while a
        // worker holds the thread's task.
        const queued = this.#fleet.holdFor(submitted);
        return Math.min(queued > 0 ? queued : await this.#gateway.taskHeldFor(thread), deadline - Date.now());
      };
      const delivery = await this.#deliver(
        () => this.#startWaitingUpdate(thread, input, create),
        () => this.#submitBySignal(thread, input, create),
        holdSignal,
      );
      this.#stopsAnswer(thread, input);
      if (delivery.kind === 'taken') {
        const model = create?.config.model ?? this.config.model.default;
        // The run as the thread took it is only known at its end; until then, as its input says.
        const handle = delivery.value;
        return {
          run: queuedRun({ thread_id: thread.thread_id, model }, input, Date.now()),
          settled: async (signal) =>
            this.#settledRun(await withCallSignal(this.#gateway.client, signal, () => handle.result())),
        };
      }
      return { run: await this.#queued(thread, input, create) };
    }
    const delivery = await this.#deliver(
      () => this.#submitByUpdate(thread, input, create),
      () => this.#submitBySignal(thread, input, create),
    );
    this.#stopsAnswer(thread, input);
    if (delivery.kind === 'taken') return { run: delivery.value };
    return { run: await this.#queued(thread, input, create) };
  }

  /** An interrupting input, once delivered, stops the answer under way as a Stop does. */
  #stopsAnswer(thread: ThreadRef, input: messages.SubmitInput): void {
    if (input.multitask_strategy === MultitaskStrategy.interrupt) this.askToBeat?.(thread.workflow_id);
  }

  /**
   * The run a waiting update answered; what came with it (decision 0255) is kept for the values'
   * reads, by the run object. A worker of an earlier release answers the run alone.
   */
  #settledRun(answer: Run | messages.WaitedRun): Run {
    if (!('run' in answer)) return answer;
    if (answer.values !== undefined) this.#carried.set(answer.run, answer.values);
    return answer.run;
  }

  async #queued(thread: ThreadRef, input: messages.SubmitInput, create: NewConversation | undefined) {
    const model = create?.config.model ?? (await this.#modelOf(thread));
    return queuedRun({ thread_id: thread.thread_id, model }, input, Date.now());
  }

  #submitByUpdate(
    thread: ThreadRef,
    input: messages.SubmitInput,
    create: NewConversation | undefined,
  ): Promise<Run> {
    if (create === undefined)
      return this.#gateway.handle(thread).executeUpdate(messages.submitInputUpdate, { args: [input] });
    const startWorkflowOperation = new WithStartWorkflowOperation<typeof conversationWorkflow>(
      'conversationWorkflow',
      {
        ...startOptions(this.#gateway.config.taskQueue, thread, create, input),
        workflowIdConflictPolicy: 'USE_EXISTING',
      },
    );
    return this.#gateway.client.workflow.executeUpdateWithStart(messages.submitInputUpdate, {
      args: [input],
      startWorkflowOperation,
    });
  }

  /** The same update asked to answer at the run's end: resolves once the thread accepted it. */
  #startWaitingUpdate(
    thread: ThreadRef,
    input: messages.SubmitInput,
    create: NewConversation | undefined,
  ): Promise<WorkflowUpdateHandle<Run | messages.WaitedRun>> {
    // The messages this API does not hold yet come with the answer when they are few, so no query
    // follows the update (0255).
    const maxChars = this.config.api.waitValuesChars;
    const values = { after: this.#gateway.transcriptKeptAfter(thread), max_chars: maxChars };
    const args: [messages.SubmitInput, messages.SubmitOptions] = [
      input,
      maxChars > 0 ? { wait: true, values } : { wait: true },
    ];
    const accepted = (handle: WorkflowUpdateHandle<Run | messages.WaitedRun>) => {
      this.#fleet.accepted();
      this.#running.set(thread.workflow_id, true);
      return handle;
    };
    const update = () =>
      this.#gateway
        .handle(thread)
        .startUpdate(messages.waitingSubmitInputUpdate, { args, waitForStage: WorkflowUpdateStage.ACCEPTED })
        .then(accepted, (error: unknown) => {
          // Ended (closed, deleted): no longer taken for running (0301, 0302).
          if (error instanceof WorkflowNotFoundError) this.#running.delete(thread.workflow_id);
          throw error;
        });
    if (create === undefined) return update();
    // A thread that took an input through this API a moment ago is most likely still running: the
    // update alone reaches it, without the start request's memo, summary, search attributes and
    // arguments to encode and check (decision 0301). Ended since (closed, deleted), it answers not
    // found, and the input is asked with the start, as it would have been.
    if (this.#running.has(thread.workflow_id))
      return update().catch((error: unknown) => {
        if (!(error instanceof WorkflowNotFoundError)) throw error;
        return this.#startWaitingUpdateWithStart(thread, create, input, args, accepted);
      });
    return this.#startWaitingUpdateWithStart(thread, create, input, args, accepted);
  }

  #startWaitingUpdateWithStart(
    thread: ThreadRef,
    create: NewConversation,
    input: messages.SubmitInput,
    args: [messages.SubmitInput, messages.SubmitOptions],
    accepted: (
      handle: WorkflowUpdateHandle<Run | messages.WaitedRun>,
    ) => WorkflowUpdateHandle<Run | messages.WaitedRun>,
  ): Promise<WorkflowUpdateHandle<Run | messages.WaitedRun>> {
    const startWorkflowOperation = new WithStartWorkflowOperation<typeof conversationWorkflow>(
      'conversationWorkflow',
      {
        ...startOptions(this.#gateway.config.taskQueue, thread, create, input),
        workflowIdConflictPolicy: 'USE_EXISTING',
      },
    );
    return this.#gateway.client.workflow
      .startUpdateWithStart(messages.waitingSubmitInputUpdate, {
        args,
        waitForStage: WorkflowUpdateStage.ACCEPTED,
        startWorkflowOperation,
      })
      .then(accepted);
  }

  async #submitBySignal(
    thread: ThreadRef,
    input: messages.SubmitInput,
    create: NewConversation | undefined,
  ): Promise<void> {
    if (create === undefined) {
      await this.#gateway.handle(thread).signal(messages.userMessageSignal, input);
      return;
    }
    await this.#gateway.client.workflow.signalWithStart('conversationWorkflow', {
      ...startOptions(this.#gateway.config.taskQueue, thread, create, input),
      signal: messages.userMessageSignal,
      signalArgs: [input],
    });
  }

  /** The thread's model as visibility records it (no worker needed), for a run answered as queued. */
  async #modelOf(thread: ThreadRef): Promise<string> {
    const description = await this.#gateway.handle(thread).describe();
    return description.typedSearchAttributes.get(searchAttributes.model) ?? this.config.model.default;
  }

  /** Cancels a run; `queued` when the cancel went by signal (the thread applies it when it can). */
  async cancelRun(thread: ThreadRef, runId: string, reason: string | undefined): Promise<Delivery<Run>> {
    const input = { run_id: runId, ...(reason === undefined ? {} : { reason }) };
    const delivery = await this.#deliver(
      () => this.#gateway.handle(thread).executeUpdate(messages.requestCancelUpdate, { args: [input] }),
      () => this.#gateway.handle(thread).signal(messages.cancelRunSignal, input),
    );
    // Taken, the cancel is on the call's activity already; queued, it is in history and the worker
    // asked beats once more a second later, when the thread has likely applied it.
    if (delivery.kind === 'queued' || !isTerminal(delivery.value.status))
      this.askToBeat?.(thread.workflow_id);
    return delivery;
  }

  /**
   * Decides an approval; `queued` when the decision went by signal. A decision for an approval
   * that one already in the thread's history decides is 409 `approval_not_pending`, even while no
   * worker runs to say so: the thread would apply the first and drop this one.
   */
  decideApproval(thread: ThreadRef, decision: DecideApprovalInput): Promise<Delivery<PendingApproval>> {
    return this.#deliver(
      () => this.#gateway.handle(thread).executeUpdate(messages.decideApprovalUpdate, { args: [decision] }),
      async () => {
        if (await this.#gateway.approvalSignaled(thread, decision.approval_id))
          throw new ApiError(
            409,
            'approval_not_pending',
            `approval ${decision.approval_id} is already decided: a decision for it is in the thread's history`,
          );
        await this.#gateway.handle(thread).signal(messages.approvalSignal, decision);
      },
    );
  }
}
