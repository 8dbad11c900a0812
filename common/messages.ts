/**
 * Every signal, update and query of the conversation workflow, defined once. The definition's
 * variable name is the wire name plus its kind.
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { PushConfig, PushConfigRef, SetPushConfigInput } from './a2a-push';
import type { FailureType } from './failures';
import type { ChildCompleted } from './children';
import type { DecideApprovalInput, PendingApproval, UpdateLimitsInput } from './approvals';
import type { Run, SubmitInput } from './run';
import type { Thread, ThreadConfig } from './thread';
import type { Branch, Message, ModelMessage } from './transcript';

export type { PushConfig, PushConfigRef, SetPushConfigInput } from './a2a-push';

/** A run's input, defined beside the run (`common/run.ts`); the `submitInput` update carries it. */
export type { SubmitInput } from './run';

export interface RunRef {
  run_id: string;
}

/** How a `submitInput` caller wants its answer. */
export interface SubmitOptions {
  /**
   * Answer once the run is over or waits on a human, instead of as soon as it is taken in: the
   * caller awaits the update's result (having waited only for its acceptance to know the input
   * landed), so a `runs/wait` costs one update, with no second one and no timer. Answered early,
   * with the run unfinished, when the workflow hands over to continue-as-new (ask again).
   */
  wait?: boolean;
  /**
   * With `wait`: answer a `WaitedRun` instead of the run, carrying what the caller's final answer
   * needs when it is small (decision 0255), so that no query follows the update. A worker of an
   * earlier release ignores it and answers the run.
   */
  values?: WaitedValuesAsk;
}

export interface WaitedValuesAsk {
  /** The messages appended after message `m<after>` (what the caller does not hold yet). */
  after: number;
  /** Carried only when those messages and the pending approvals fit in this many characters of JSON. */
  max_chars: number;
}

/** A waiting `submitInput`'s answer when asked for `values`. */
export interface WaitedRun {
  run: Run;
  /** Absent when the run is not settled (a hand-over) or what it needs does not fit. */
  values?: WaitedValues;
}

export interface WaitedValues {
  /** The asked `after`, echoed. */
  after: number;
  /** The transcript after `m<after>`, whole (`more` is false), as `getTranscriptPage` answers it. */
  page: TranscriptPage;
  /** The thread's pending approvals, for a run that waits on a human. */
  pending_approvals?: PendingApproval[];
}

export interface CancelRunInput extends RunRef {
  /** Shown in the run's error and to the model as the reason tools stopped. */
  reason?: string;
}

export interface AwaitRunInput extends RunRef {
  /** Answer with the run as it is after this long, finished or not. Without it: until it ends. */
  timeout_ms?: number;
}

export interface ModelMessagesQuery {
  run_id: string;
  /** The model step (model call index within the run) the messages are for. */
  step: number;
  /** A page: leave out the first `from` messages (the caller holds them). @default 0 */
  from?: number;
  /** A page: end it once it holds about this many characters of JSON (always one message at least). */
  max_chars?: number;
}

/**
 * Characters of JSON in one page of a long read (`getStepMessages`, `getTranscriptPage`): under
 * the 512 KiB at which the Temporal server warns about a payload even at three bytes a character
 * (UTF-8), encryption included.
 */
export const readPageChars = 128 * 1024;

export interface TranscriptQuery {
  /** Only messages appended after message `m<after>` (for paging). @default 0 */
  after?: number;
  limit?: number;
}

export interface ListRunsQuery {
  limit?: number;
}

/** Appends user input as a new run; rejected (by its validator) when empty, oversized, duplicate, closed or busy under `reject`. */
export const submitInputUpdate = defineUpdate<Run, [SubmitInput, SubmitOptions?]>('submitInput');
/** The same update as a waiting caller that asks for `values` sees it (and the workflow serves it). */
export const waitingSubmitInputUpdate = defineUpdate<Run | WaitedRun, [SubmitInput, SubmitOptions?]>(
  submitInputUpdate.name,
);
/**
 * Answers with the run once it has finished: one update per wait, completed in the same workflow
 * task as the run's end, instead of a stream poll per event. It also answers early, with the run
 * unfinished, after `timeout_ms` or when the workflow hands over to continue-as-new (ask again).
 */
export const awaitRunUpdate = defineUpdate<Run, [AwaitRunInput]>('awaitRun');
/** Marks a run `deferred`: its caller stopped waiting; the run keeps going. */
export const deferRunUpdate = defineUpdate<Run, [RunRef]>('deferRun');
/** Cancels a queued or running run and returns it; cancelling a finished run returns it unchanged. */
export const requestCancelUpdate = defineUpdate<Run, [CancelRunInput]>('requestCancel');

/** Fire-and-forget input, for other workflows and tools. */
export const userMessageSignal = defineSignal<[SubmitInput]>('userMessage');
export const cancelRunSignal = defineSignal<[CancelRunInput]>('cancelRun');
/** Ends the conversation: queued runs are cancelled, the active run is interrupted, the workflow completes. */
/** A child agent's run finished: its result answers the waiting tool call, or becomes a continuation run. */
export const childCompletedSignal = defineSignal<[ChildCompleted]>('childCompleted');
export const closeSignal = defineSignal<[{ reason?: string }]>('close');

export const getThreadQuery = defineQuery<Thread>('getThread');
export const getRunQuery = defineQuery<Run | null, [RunRef]>('getRun');
export const listRunsQuery = defineQuery<Run[], [ListRunsQuery]>('listRuns');
/** The oldest offset the thread's event log still holds: a cursor before it has expired. */
export const getStreamBaseQuery = defineQuery<number>('getStreamBase');
export const getTranscriptQuery = defineQuery<Message[], [TranscriptQuery]>('getTranscript');

export interface TranscriptPageQuery {
  /** Only messages appended after message `m<after>`. @default 0 */
  after?: number;
  /** End the page once it holds about this many characters of JSON (always one message at least). */
  max_chars: number;
}

export interface TranscriptPage {
  messages: Message[];
  /** More messages follow the page's last one. */
  more: boolean;
  /**
   * Changes whenever the transcript changes other than by appending (compaction, a fork): a
   * reader that holds messages read under the same revision holds the transcript's front.
   */
  revision: string;
}
/** The transcript in bounded pages, for readers of long threads (the API). */
export const getTranscriptPageQuery = defineQuery<TranscriptPage, [TranscriptPageQuery]>('getTranscriptPage');

/** The earlier branches forks cut off (oldest first), beside the transcript, the current one. */
export interface ThreadBranches {
  branches: Branch[];
  /** Messages compacted out of the transcript's front: none means the thread's `start` is kept. */
  compacted_messages: number;
}
export const getBranchesQuery = defineQuery<ThreadBranches>('getBranches');
/**
 * What the model is sent for a run's current model step, for the model activity when its input
 * leaves the messages out; fails with `ModelStepNotCurrent` once that step is over.
 */
export const getModelMessagesQuery = defineQuery<ModelMessage[], [ModelMessagesQuery]>('getModelMessages');
/**
 * The same messages, or why there are none, as a value the model activity tells apart by its
 * `current` field: a query's failure reaches a client only as message text.
 */
export type StepMessages =
  | {
      current: true;
      messages: ModelMessage[];
      /** Asked for a page (`from`, `max_chars`): how many messages the step has in all. */
      total?: number;
      /** Asked for a page: as `TranscriptPage.revision`, for the messages before `from`. */
      revision?: string;
    }
  | { current: false; type: typeof FailureType.modelStepNotCurrent; message: string };
export const getStepMessagesQuery = defineQuery<StepMessages, [ModelMessagesQuery]>('getStepMessages');

/** Approves or denies a pending approval; the validator rejects unknown or already decided ids. */
export const decideApprovalUpdate = defineUpdate<PendingApproval, [DecideApprovalInput]>('decideApproval');
/** The fire-and-forget form of `decideApproval`, for other workflows and tools. */
export const approvalSignal = defineSignal<[DecideApprovalInput]>('approval');
/** Raises or lowers the thread's budgets; returns the thread. */
export const updateLimitsUpdate = defineUpdate<Thread, [UpdateLimitsInput]>('updateLimits');
/** Merges keys into the thread's metadata (and its memo, which search reads); returns the thread. */
export const patchMetadataUpdate = defineUpdate<Thread, [{ metadata: Record<string, unknown> }]>(
  'patchMetadata',
);
/** Removes a finished run's record (its messages stay); the validator rejects unknown or unfinished runs. */
export const deleteRunUpdate = defineUpdate<void, [RunRef]>('deleteRun');
export const getPendingApprovalsQuery = defineQuery<PendingApproval[]>('getPendingApprovals');
/**
 * Registers (or replaces, by id) an A2A push notification config on an unfinished run (decision
 * 0485); the validator rejects an unknown or finished run and more than `maxPushConfigsPerRun`.
 */
export const setPushConfigUpdate = defineUpdate<PushConfig, [SetPushConfigInput]>('setPushConfig');
/** Removes a run's push notification config; the validator rejects an unknown one. */
export const deletePushConfigUpdate = defineUpdate<void, [PushConfigRef]>('deletePushConfig');
/** A run's push notification configs (none once it has ended and they were delivered). */
export const getPushConfigsQuery = defineQuery<PushConfig[], [RunRef]>('getPushConfigs');
/** Everything the workflow holds, for operators debugging a conversation (not a stable schema). */
export interface StateDump {
  /** The reducer's whole state: thread, transcript, runs, active step, queue, usage. */
  state: Record<string, unknown>;
  /** Activities the interpreter is waiting on right now. */
  in_flight_activities: number;
  /** True while handing off to continue-as-new. */
  draining: boolean;
  workflow_run_id: string;
  history_length: number;
  /** Bytes of history so far (what continue-as-new by size looks at). */
  history_size: number;
  continue_as_new_suggested: boolean;
}
export const getStateQuery = defineQuery<StateDump>('getState');

/** Who a copy of a thread is (LangGraph's thread copy): the rest comes from the thread copied. */
export interface CopyRequest {
  thread_id: string;
  owner?: string;
  created_at: string;
}

/**
 * A thread's answer to a copy of itself: busy (a run under way or queued: its state is between
 * steps), or the copy's start — the source's configuration and metadata, and its transcript,
 * earlier branches and message sequence carried as continue-as-new carries them, which every
 * worker release reads (workflows/interpreter/carried.ts; opaque here, passed on as they are).
 */
export type ThreadCopy =
  | { busy: true }
  | {
      busy: false;
      config: ThreadConfig;
      metadata: Record<string, unknown>;
      carried: Record<string, unknown>;
      parts: unknown[];
    };
export const getThreadCopyQuery = defineQuery<ThreadCopy, [CopyRequest]>('getThreadCopy');
