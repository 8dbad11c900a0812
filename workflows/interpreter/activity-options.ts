/**
 * Timeouts and retry policies. Temporal owns every retry: providers run with their own retries off.
 */
import {
  ApplicationFailure,
  TimeoutFailure,
  type ActivityOptions,
  type LocalActivityOptions,
} from '@temporalio/workflow';
import { nonRetryableModelFailures } from '../../common/failures';
import type { ToolFlags } from '../../common/tools';
import type { ToolTimeout } from '../core/wording';

/** How long a silent worker is trusted: a crashed worker's activity is retried after this. */
export const heartbeatTimeout = '10 seconds';

/**
 * Attempts a model call may take in all. Most are spent by workers that died or shut down
 * mid-call, retried a second later; the model's own faults have a budget of 6 that the activity
 * keeps (activities/model-faults.ts), with their own backoff, 1 s doubling to 30 s, or the
 * provider's `retry-after`.
 */
export const modelCallAttempts = 50;

/**
 * Model calls. The 10-minute start-to-close is the one hard timeout: a model call that streams
 * for longer than that is cut and retried.
 */
const modelCallRetry = {
  initialInterval: '1 second',
  backoffCoefficient: 1,
  maximumAttempts: modelCallAttempts,
  nonRetryableErrorTypes: [...nonRetryableModelFailures],
};

export const modelCallOptions: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout,
  retry: modelCallRetry,
};

/**
 * A model call nobody streams (`CallModelInput.deltas` false) runs as a local activity: in the
 * worker that runs its workflow, inside the workflow task, recorded as one marker event instead
 * of three activity events and a workflow task of its own. A worker that dies mid-call is noticed
 * by the workflow task's timeout (10 s, as the heartbeat timeout of the ordinary call) and the
 * call is made again by the worker that takes the task over. The activity counts the model's own
 * faults by attempt (a local activity has no heartbeats), so the limits are the ordinary call's.
 */
export const localModelCallOptions: LocalActivityOptions = {
  startToCloseTimeout: '10 minutes',
  retry: modelCallRetry,
  cancellationType: 'TRY_CANCEL',
};

/**
 * Read-only tools retry (3 attempts); side-effecting tools get exactly one, so a crash mid-tool
 * becomes an "interrupted" result instead of a second run. A tool's own time limit (bash has
 * one) ends it well inside the 15-minute start-to-close.
 */
export function toolCallOptions(flags: ToolFlags): ActivityOptions {
  return {
    startToCloseTimeout: '15 minutes',
    heartbeatTimeout,
    retry: flags.sideEffects
      ? { maximumAttempts: 1 }
      : {
          initialInterval: '1 second',
          backoffCoefficient: 2,
          maximumAttempts: 3,
          nonRetryableErrorTypes: ['ToolInputInvalid', 'WorkspaceViolation'],
        },
  };
}

/**
 * Up to 10 attempts, 1 s doubling to at most 5 min apart (about 17 minutes in all); each attempt
 * has its own 10 s HTTP timeout inside the 30 s start-to-close.
 */
export const webhookOptions: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '5 minutes',
    maximumAttempts: 10,
  },
};

/**
 * The check of a worker whose tool call Temporal gave up on (decision 0412): a worker that runs
 * answers at once, so a few seconds and three tries; failing those, the result cannot tell.
 */
export const checkWorkerOptions: ActivityOptions = {
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumAttempts: 3 },
};

export interface FailureFacts {
  /** `ApplicationFailure.type` of the innermost cause that has one. */
  type?: string;
  /** The innermost message: the activity's own words, not the SDK's wrapper. */
  message: string;
  /** Set when the activity was given up on by this timeout: its worker died, hung or lost Temporal. */
  timeout: ToolTimeout | undefined;
  /** With `timeout`: the details of the last heartbeat Temporal had from the activity, if any. */
  heartbeat?: unknown;
}

/** Reads an activity failure's cause chain by the SDK's failure classes. */
export function describeFailure(error: unknown): FailureFacts {
  let facts: FailureFacts = { message: 'unknown failure', timeout: undefined };
  for (let node: unknown = error; node instanceof Error; node = node.cause) {
    if (node.message !== '') facts = { ...facts, message: node.message };
    if (node instanceof ApplicationFailure && typeof node.type === 'string' && node.type !== '')
      facts = { ...facts, type: node.type };
    if (node instanceof TimeoutFailure)
      facts = { ...facts, timeout: node.timeoutType, heartbeat: node.lastHeartbeatDetails };
  }
  return facts;
}
