/**
 * A model call's own fault budget, kept apart from worker deaths (decision 0063). Temporal's retry
 * policy counts every attempt, and a worker killed or redeployed mid-call spends one; under a
 * chaos soak or a long rolling deploy that alone could fail a run the model never failed. So the
 * policy allows many attempts one second apart, and the activity counts the faults of the model
 * itself in its heartbeat details, which the next attempt reads: the sixth fault is final, and
 * faults back off 1 s doubling to 30 s (or as the provider's `retry-after` says).
 */
import { ApplicationFailure, msToNumber } from '@temporalio/common';
import { Context } from '@temporalio/activity';
import { spentByAttempts, type ModelCallSpend } from '../common/activities';
import { totalTokens, type Usage, zeroUsage } from '../common/usage';

/** Faults of the model (errors, overloads, stalls) after which the run is told it failed. */
export const modelFaultLimit = 6;

const firstBackoffMs = 1_000;
const maxBackoffMs = 30_000;

/** What a model call's heartbeats carry from one attempt to the next (and what it spent, 0425). */
export interface ModelCallProgress extends ModelCallSpend {
  model_faults: number;
}

/**
 * What the attempts before this one spent: what they were billed, and the reservation of one
 * that never said (its worker died mid-call), counted as spent. Nothing on a first attempt, or
 * for a local activity, which has no heartbeats to carry it.
 */
export function spentSoFar(): Usage {
  const { info } = Context.current();
  if (info.isLocal) return zeroUsage;
  return spentByAttempts(info.heartbeatDetails) ?? zeroUsage;
}

/** Faults counted by the attempts before this one (0 on the first attempt). */
export function faultsSoFar(): number {
  const { info } = Context.current();
  // A local activity's attempts are all made by the worker that holds its workflow task, so
  // each earlier one was a fault of the model (a worker's death starts the count again).
  if (info.isLocal) return info.attempt - 1;
  const details: unknown = info.heartbeatDetails;
  if (typeof details !== 'object' || details === null) return 0;
  const faults = (details as Partial<ModelCallProgress>).model_faults;
  return typeof faults === 'number' && Number.isInteger(faults) && faults >= 0 ? faults : 0;
}

/**
 * Counts one fault of the model and says how the next attempt goes: the failure as thrown (with
 * the backoff as its next-retry delay unless the provider gave one), or, at the limit, the same
 * failure made final. The count travels in the last heartbeat, which the SDK flushes with the
 * failure.
 */
export function countModelFault(error: unknown, before: number, spend: ModelCallSpend = {}): unknown {
  const billed = spend.billed;
  const paid = billed !== undefined && (totalTokens(billed) > 0 || billed.cost_usd > 0);
  if (error instanceof ApplicationFailure && error.nonRetryable)
    return paid ? withBilled(error, billed) : error;
  const faults = before + 1;
  if (!Context.current().info.isLocal)
    Context.current().heartbeat({ ...spend, model_faults: faults } satisfies ModelCallProgress);
  const known = error instanceof ApplicationFailure;
  const type = (known ? error.type : error instanceof Error ? error.name : undefined) ?? 'Error';
  const message = error instanceof Error ? error.message : String(error);
  // The new failure replaces an ApplicationFailure, so it keeps that one's cause, not itself.
  const cause = known ? error.cause : error instanceof Error ? error : undefined;
  if (faults >= modelFaultLimit)
    return ApplicationFailure.create({
      type,
      message,
      nonRetryable: true,
      ...(paid ? { details: [{ billed }] } : {}),
      ...(cause ? { cause } : {}),
    });
  const delayMs =
    known && error.nextRetryDelay !== undefined
      ? msToNumber(error.nextRetryDelay)
      : Math.min(maxBackoffMs, firstBackoffMs * 2 ** (faults - 1));
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: false,
    nextRetryDelay: delayMs,
    ...(known ? { details: error.details ?? [] } : {}),
    ...(cause ? { cause } : {}),
  });
}

/** A final failure that also says what the call's attempts were billed, for the workflow's ledger. */
function withBilled(error: ApplicationFailure, billed: Usage): ApplicationFailure {
  return ApplicationFailure.create({
    ...(error.type === undefined || error.type === null ? {} : { type: error.type }),
    message: error.message,
    nonRetryable: true,
    details: [{ billed }],
    ...(error.cause === undefined ? {} : { cause: error.cause }),
  });
}
