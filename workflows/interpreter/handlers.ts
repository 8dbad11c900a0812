/**
 * The workflow's message handlers, thin: validators turn the core's rejections into failures,
 * updates and signals become events, queries read views of the state. Registered in this order
 * (buffered messages are delivered in the order their handlers appear).
 */
import {
  ApplicationFailure,
  condition,
  log,
  setHandler,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import type { DecideApprovalInput, PendingApproval, UpdateLimitsInput } from '../../common/approvals';
import type { ChildCompleted } from '../../common/children';
import * as messages from '../../common/messages';
import { isTerminal, type Run } from '../../common/run';
import { pendingApprovals, validateDecision } from '../core/approvals';
import { validateLimits } from '../core/budget';
import { findRun, type ThreadState } from '../core/state';
import { stepMessages, transcriptAfter, transcriptPage } from '../core/pages';
import type { EventInput } from '../core/transitions';
import { isValidRunId, type Rejection } from '../../common/input-rules';
import { validateDeleteRun, validateRunRef, validateSubmit } from '../core/validate';
import { isSettled, toThread } from '../core/views';
import { pushConfigsOf, validateDeletePushConfig, validateSetPushConfig } from '../core/push';
import { copyOf } from './carried';
import type { EventLog } from './stream';
import type { Patches } from './patches';

/** Since this patch a signalled input the thread refuses becomes a failed run, not a log line. */
export const refusedInputRunPatch = 'keel-refused-input-run';

/** What the handlers need of the conversation (interpreter/conversation.ts). */
export interface HandlerHost {
  readonly state: ThreadState;
  dispatch(event: EventInput): void;
  /** The event stream: the offset its next event gets, and the oldest it holds. */
  readonly stream: Pick<EventLog, 'nextOffset' | 'baseOffset'>;
  /** True once the workflow is ending or handing over: `awaitRun` answers at once. */
  readonly releasingWaiters: boolean;
  /** For the `getState` query: what is in flight, and whether the run is handing over. */
  readonly inFlight: number;
  readonly draining: boolean;
  /** The run's patch decisions. */
  readonly patches: Patches;
  childReported(report: ChildCompleted): void;
}

const reject = (rejection: Rejection | undefined): void => {
  if (rejection !== undefined) throw ApplicationFailure.create({ ...rejection, nonRetryable: true });
};

const withReason = (reason: string | undefined) => (reason === undefined ? {} : { reason });

/**
 * A Stop keeps what the model has said, in runs since the patch (decision 0370): cancelled
 * outright, the streamed text was lost from the state, the history and the next model request.
 */
const keepPartial = (host: HandlerHost) =>
  host.patches.stopsKeepPartial ? { keep_partial: true as const } : {};

/**
 * An interrupt or a close keeps what the active run's model call has said, as a Stop does, in
 * runs since `everyStopKeepsPartialPatch` (decision 0400). The patch is asked only when it decides
 * something: a model call that hands its text back is in flight and not already stopping.
 */
export function keepPartialOnInterrupt(host: Pick<HandlerHost, 'state' | 'patches'>): {
  keep_partial?: true;
} {
  const step = host.state.active?.step;
  if (step?.kind !== 'model' || step.stopping !== undefined || !host.patches.stopsKeepPartial) return {};
  return host.patches.askEveryStopKeepsPartial() ? { keep_partial: true } : {};
}

/** What an input that may interrupt the active run carries. */
const interrupting = (host: HandlerHost, input: messages.SubmitInput) =>
  input.multitask_strategy === 'interrupt' ? keepPartialOnInterrupt(host) : {};

export function registerHandlers(host: HandlerHost): void {
  // The run an update names: its validator (or the update itself) made sure it exists.
  const run = (runId: string): Run => findRun(host.state, runId) as Run;
  const requireRun = ({ run_id }: messages.RunRef): void => reject(validateRunRef(host.state, run_id));
  setHandler(
    messages.waitingSubmitInputUpdate,
    (input, options) => {
      host.dispatch({
        type: 'inputSubmitted',
        input,
        next_offset: host.stream.nextOffset(),
        ...interrupting(host, input),
      });
      // Without `wait` the answer is the run as taken in, in this task, as it always was.
      if (options?.wait !== true) return run(input.run_id);
      const { values } = options;
      return condition(() => host.releasingWaiters || isSettled(run(input.run_id))).then(() =>
        values === undefined ? run(input.run_id) : waitedRun(host.state, run(input.run_id), values),
      );
    },
    {
      validator: (input: messages.SubmitInput, _options?: messages.SubmitOptions) =>
        reject(validateSubmit(host.state, input)),
    },
  );
  setHandler(
    messages.deferRunUpdate,
    ({ run_id }) => {
      host.dispatch({ type: 'runDeferred', run_id });
      return run(run_id);
    },
    { validator: requireRun },
  );
  setHandler(
    messages.requestCancelUpdate,
    ({ run_id, reason }) => {
      host.dispatch({ type: 'cancelRequested', run_id, ...withReason(reason), ...keepPartial(host) });
      return run(run_id);
    },
    { validator: requireRun },
  );
  setHandler(
    messages.awaitRunUpdate,
    async ({ run_id, timeout_ms }) => {
      const over = () =>
        host.releasingWaiters || isTerminal(findRun(host.state, run_id)?.status ?? 'completed');
      if (timeout_ms === undefined) await condition(over);
      else await condition(over, Math.max(1, timeout_ms));
      return run(run_id);
    },
    { validator: requireRun },
  );
  setHandler(messages.userMessageSignal, (input) => takeSignalledInput(host, input));
  setHandler(messages.cancelRunSignal, ({ run_id, reason }) =>
    host.dispatch({ type: 'cancelRequested', run_id, ...withReason(reason), ...keepPartial(host) }),
  );
  setHandler(messages.childCompletedSignal, (report) => host.childReported(report));
  setHandler(messages.closeSignal, ({ reason }) =>
    host.dispatch({ type: 'closeRequested', ...withReason(reason), ...keepPartialOnInterrupt(host) }),
  );
  registerApprovalHandlers(host);
  setHandler(messages.getThreadQuery, () => toThread(host.state));
  setHandler(messages.getRunQuery, ({ run_id }) => findRun(host.state, run_id) ?? null);
  setHandler(messages.listRunsQuery, ({ limit }) => [...host.state.runs].reverse().slice(0, limit ?? 100));
  setHandler(messages.getStreamBaseQuery, () => host.stream.baseOffset);
  setHandler(messages.getStepMessagesQuery, (query) => stepMessages(host.state, query));
  // The older form, which fails instead (model activities of earlier releases ask it).
  setHandler(messages.getModelMessagesQuery, ({ run_id, step }) => {
    const answer = stepMessages(host.state, { run_id, step });
    if (!answer.current) throw ApplicationFailure.create({ ...answer, nonRetryable: true });
    return answer.messages;
  });
  setHandler(messages.getTranscriptQuery, (query) => transcriptAfter(host.state, query));
  setHandler(messages.getTranscriptPageQuery, (query) => transcriptPage(host.state, query));
  setHandler(messages.getBranchesQuery, () => ({
    branches: host.state.branches ?? [],
    compacted_messages: host.state.compacted_messages,
  }));
  setHandler(messages.getThreadCopyQuery, (request) => copyOf(host.state, request));
  setHandler(messages.getStateQuery, () => {
    const info = workflowInfo();
    return {
      state: host.state as unknown as Record<string, unknown>,
      in_flight_activities: host.inFlight,
      draining: host.draining,
      workflow_run_id: info.runId,
      history_length: info.historyLength,
      history_size: info.historySize,
      continue_as_new_suggested: info.continueAsNewSuggested,
    };
  });
}

/** Human approvals and budgets. */
function registerApprovalHandlers(host: HandlerHost): void {
  setHandler(
    messages.decideApprovalUpdate,
    (decision) => {
      const approval = pendingApprovals(host.state).find((a) => a.approval_id === decision.approval_id);
      host.dispatch({ type: 'approvalDecided', decision });
      // The validator let only a pending approval through.
      return approval as PendingApproval;
    },
    { validator: (decision: DecideApprovalInput) => reject(validateDecision(host.state, decision)) },
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
        if (message !== undefined) reject({ type: 'InvalidInput', message });
      },
    },
  );
  setHandler(messages.patchMetadataUpdate, ({ metadata }) => {
    host.dispatch({ type: 'metadataPatched', metadata });
    upsertMemo({ metadata: host.state.thread.metadata });
    return toThread(host.state);
  });
  setHandler(messages.deleteRunUpdate, ({ run_id }) => host.dispatch({ type: 'runDeleted', run_id }), {
    validator: ({ run_id }: messages.RunRef) => reject(validateDeleteRun(host.state, run_id)),
  });
  setHandler(messages.getPendingApprovalsQuery, () => pendingApprovals(host.state));
  // A2A push notification configs (decision 0485): new handlers, so no patch — a history written
  // before them never holds these updates, and a run without configs schedules nothing new.
  setHandler(
    messages.setPushConfigUpdate,
    ({ run_id, config }) => {
      host.dispatch({ type: 'pushConfigSet', run_id, config });
      return config;
    },
    {
      validator: ({ run_id, config }: messages.SetPushConfigInput) =>
        reject(validateSetPushConfig(host.state, run_id, config)),
    },
  );
  setHandler(
    messages.deletePushConfigUpdate,
    ({ run_id, config_id }) => host.dispatch({ type: 'pushConfigDeleted', run_id, config_id }),
    { validator: (ref: messages.PushConfigRef) => reject(validateDeletePushConfig(host.state, ref)) },
  );
  setHandler(messages.getPushConfigsQuery, ({ run_id }) => pushConfigsOf(host.state, run_id));
}

/**
 * A waiting caller's answer with what its final values need, so no query follows the update
 * (decision 0255): the messages it does not hold and the pending approvals, when they fit in
 * `max_chars` (the answer is written to history with the update's completion). Reads only: no
 * command, no state changes.
 */
function waitedRun(state: ThreadState, settled: Run, ask: messages.WaitedValuesAsk): messages.WaitedRun {
  // A hand-over answers early: the caller asks again, and reads the values then.
  if (!isSettled(settled)) return { run: settled };
  const page = transcriptPage(state, { after: ask.after, max_chars: ask.max_chars });
  const pending = isTerminal(settled.status) ? undefined : pendingApprovals(state);
  const chars =
    JSON.stringify(page.messages).length + (pending === undefined ? 0 : JSON.stringify(pending).length);
  if (page.more || chars > ask.max_chars) return { run: settled };
  return {
    run: settled,
    values: { after: ask.after, page, ...(pending === undefined ? {} : { pending_approvals: pending }) },
  };
}

/**
 * Input that arrived as a signal: written to history whether or not a worker was alive, so it
 * is never refused at the door. The same run id again (a retry, or its update won the race) is
 * a no-op; input the thread's rules refuse becomes a failed run that says why.
 */
export function takeSignalledInput(host: HandlerHost, input: messages.SubmitInput): void {
  if (findRun(host.state, input.run_id) !== undefined) return;
  const next_offset = host.stream.nextOffset();
  const rejection = validateSubmit(host.state, input);
  if (rejection === undefined)
    host.dispatch({ type: 'inputSubmitted', input, next_offset, ...interrupting(host, input) });
  else if (isValidRunId(input.run_id) && host.patches.folded(refusedInputRunPatch))
    host.dispatch({ type: 'inputRefused', input, refusal: rejection, next_offset });
  else log.warn('userMessage signal ignored', { ...rejection });
}
