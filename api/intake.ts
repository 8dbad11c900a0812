/**
 * Durable intake: what a caller sends is never refused because no worker holds its thread.
 *
 * Input goes to the thread by update first, bounded by `waitMs`: on the normal path the thread
 * takes it at once, its validator answers (409 busy, 422 invalid) and the caller gets the run as
 * the thread made it. When the thread cannot answer in time — every worker down, its worker just
 * killed and its workflow task timing out (the server then refuses updates with
 * FAILED_PRECONDITION), too many updates in flight — the same input goes by signal, which the
 * server writes to history at once, worker or not. Both carry the same ids, so whichever the
 * thread sees first wins and the other is a no-op; what only the thread can decide is decided
 * there (a refused input becomes a failed run, never a lost one).
 */
import {
  isGrpcServiceError,
  ServiceError,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  type Client,
} from '@temporalio/client';

/** gRPC codes that mean "the thread cannot take an update right now", not "the input is wrong". */
const stallCodes = new Set([
  1, // CANCELLED: how a query under our deadline sometimes ends when no worker answers it
  4, // DEADLINE_EXCEEDED: our wait ran out (no worker picked the update up)
  8, // RESOURCE_EXHAUSTED: too many updates in flight on the workflow
  9, // FAILED_PRECONDITION: its workflow task is failing or timing out (a worker just died)
]);

/** True when an update or query failed because the thread's worker did not answer, not the input. */
export function isStall(error: unknown): boolean {
  if (error instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
  const grpc = error instanceof ServiceError ? error.cause : error;
  return isGrpcServiceError(grpc) && stallCodes.has(Number(grpc.code));
}

/** The thread took the input itself (`taken`), or it was written to history by signal (`queued`). */
export type Delivery<T> = { kind: 'taken'; value: T } | { kind: 'queued' };

export interface DeliverOptions<T> {
  client: Client;
  waitMs: number;
  byUpdate: () => Promise<T>;
  bySignal: () => Promise<void>;
}

export async function deliver<T>({
  client,
  waitMs,
  byUpdate,
  bySignal,
}: DeliverOptions<T>): Promise<Delivery<T>> {
  try {
    return { kind: 'taken', value: await client.withDeadline(Date.now() + waitMs, byUpdate) };
  } catch (error) {
    if (!isStall(error)) throw error;
  }
  await bySignal();
  return { kind: 'queued' };
}

/** A stall, or Temporal itself unreachable (UNAVAILABLE): worth waiting out, never a lost request. */
export function isOutage(error: unknown): boolean {
  if (isStall(error)) return true;
  const grpc = error instanceof ServiceError ? error.cause : error;
  return isGrpcServiceError(grpc) && Number(grpc.code) === 14; // UNAVAILABLE
}
