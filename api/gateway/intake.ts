/**
 * Durable intake: what a caller sends is never refused because no worker holds its thread.
 *
 * Input goes to the thread by update first: on the normal path the thread takes it at once, its
 * validator answers (409 busy, 422 invalid) and the caller gets the run as the thread made it.
 * When the thread does not answer quickly — every worker down, its worker just killed and its
 * workflow task timing out (the server then refuses updates with FAILED_PRECONDITION), too many
 * updates in flight — the same input also goes by signal, which the server writes to history at
 * once, worker or not. Both carry the same ids, so whichever the
 * thread sees first wins and the other is a no-op; what only the thread can decide is decided
 * there (a refused input becomes a failed run, never a lost one).
 */
import {
  isGrpcServiceError,
  ServiceError,
  WorkflowUpdateFailedError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type Client,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';

/** gRPC codes that mean "the thread cannot take an update right now", not "the input is wrong". */
const stallCodes = new Set([
  1, // CANCELLED: how a query under our deadline sometimes ends when no worker answers it
  4, // DEADLINE_EXCEEDED: our wait ran out (no worker picked the update up)
  8, // RESOURCE_EXHAUSTED: too many updates in flight on the workflow
  9, // FAILED_PRECONDITION: its workflow task is failing or timing out (a worker just died)
]);

/**
 * The server's own refusal of an update that a worker's task completed without taking in (a
 * worker shutting down, a task that raced a kill): the update never reached the thread, so it is
 * a stall, not the thread's answer. Seen once in a 30-minute soak, as a 500 on `join`.
 */
const unprocessedUpdate = 'UnprocessedUpdate';

/** True when an update or query failed because the thread's worker did not answer, not the input. */
export function isStall(error: unknown): boolean {
  if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
  if (
    error instanceof WorkflowUpdateFailedError &&
    error.cause instanceof ApplicationFailure &&
    error.cause.type === unprocessedUpdate
  )
    return true;
  const grpc = error instanceof ServiceError ? error.cause : error;
  return isGrpcServiceError(grpc) && stallCodes.has(Number(grpc.code));
}

/** The thread took the input itself (`taken`), or it was written to history by signal (`queued`). */
export type Delivery<T> = { kind: 'taken'; value: T } | { kind: 'queued' };

export interface IntakeTimings {
  /** After this long without the thread's answer the input also goes by signal (durable now). */
  signalAfterMs: number;
  /** The thread's own answer is awaited this long in all; after that the caller hears `queued`. */
  answerWithinMs: number;
}

export interface DeliverOptions<T> {
  client: Client;
  timings: IntakeTimings;
  byUpdate: () => Promise<T>;
  bySignal: () => Promise<void>;
  /**
   * Asked when the thread has not answered within `signalAfterMs`: how much longer its answer is
   * worth awaiting before the signal goes, because a live worker holds the thread's workflow task
   * right now (a long task: a model call made inside it, as a local activity). 0: signal now.
   */
  holdSignal?: () => Promise<number>;
}

type Outcome<T> = { kind: 'taken'; value: T } | { kind: 'failed'; error: unknown };

/** A held signal re-asks whether the worker still holds the task at least this often. */
const maxHoldStepMs = 1_000;

const after = (ms: number) =>
  new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), Math.max(0, ms)).unref());

/**
 * Hands input to the thread. The update is the normal path; if it has not answered after
 * `signalAfterMs` (or stalled at once), the same input is sent by signal, and the update's answer
 * is still taken if it comes within `answerWithinMs`: under load the caller still hears the
 * thread's own answer, with no worker it hears `queued` within `answerWithinMs`.
 */
export async function deliver<T>({
  client,
  timings,
  byUpdate,
  bySignal,
  holdSignal,
}: DeliverOptions<T>): Promise<Delivery<T>> {
  const started = Date.now();
  const giveUp = new AbortController();
  const update: Promise<Outcome<T>> = client.withAbortSignal(giveUp.signal, byUpdate).then(
    (value) => ({ kind: 'taken', value }),
    (error: unknown) => ({ kind: 'failed', error }),
  );
  try {
    let early = await Promise.race([update, after(timings.signalAfterMs)]);
    while (early === undefined && holdSignal !== undefined) {
      const holdMs = await holdSignal().catch(() => 0);
      if (holdMs <= 0) break;
      early = await Promise.race([update, after(Math.min(holdMs, maxHoldStepMs))]);
    }
    if (early?.kind === 'taken') return early;
    if (early !== undefined && !isStall(early.error)) throw early.error;
    await bySignal();
    if (early !== undefined) return { kind: 'queued' };
    // Both are on their way now; the first the thread sees wins, the other is a no-op.
    const late = await Promise.race([update, after(timings.answerWithinMs - (Date.now() - started))]);
    if (late === undefined) return { kind: 'queued' };
    if (late.kind === 'taken') return late;
    // The thread's own refusal, only later than usual (a loaded worker): the caller hears it, as
    // on the fast path. Its signal twin is refused the same way in the workflow.
    if (!isStall(late.error)) throw late.error;
    return { kind: 'queued' };
  } finally {
    // The update may still land after this; it carries the same ids, so it changes nothing.
    giveUp.abort();
  }
}

/**
 * Whether workers are taking a task queue's tasks right now, from the acceptances this API sees:
 * a waiting input that a thread has not accepted yet while other threads' inputs are being
 * accepted is queued behind a busy fleet (100 conversations on two cores wait seconds for a
 * workflow task), not stranded. Sending it by signal then only adds work — the signal's event, the
 * update's refusal as a duplicate, a second update to await the run and the checks for interrupts
 * beside it — to a fleet that is behind already (decision 0300).
 */
export class FleetActivity {
  #lastAccepted = -Infinity;

  constructor(
    /** Acceptances at most this old say the fleet is taking tasks. */
    private readonly takingWithinMs = 10_000,
    /** How long an input queued behind a busy fleet is held from going by signal, at most. */
    private readonly queuedHoldMs = 30_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** A thread accepted an input. */
  accepted(): void {
    this.#lastAccepted = this.now();
  }

  /**
   * How long an input not accepted since `since` may be held without asking its thread; 0 when it
   * is to be asked (no thread accepted lately — every worker down — or it was held long enough).
   */
  holdFor(since: number): number {
    const now = this.now();
    // Until the latest acceptance is too old to say anything, or the hold is over.
    return Math.max(0, Math.min(this.#lastAccepted + this.takingWithinMs, since + this.queuedHoldMs) - now);
  }
}

/** A stall, or Temporal itself unreachable (UNAVAILABLE): worth waiting out, never a lost request. */
export function isOutage(error: unknown): boolean {
  if (isStall(error)) return true;
  const grpc = error instanceof ServiceError ? error.cause : error;
  return isGrpcServiceError(grpc) && Number(grpc.code) === 14; // UNAVAILABLE
}
