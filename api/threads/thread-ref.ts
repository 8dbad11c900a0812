/**
 * Which workflow holds a caller's thread. With API tokens, thread ids are per owner (decision
 * 0160): alice's `t1` is `conversation-t1~<alice's scope>` and bob's `t1` another workflow, so
 * neither can learn of the other's. Without tokens there is one implicit owner and no scope: ids
 * are `conversation-<thread_id>` as they always were.
 */
import { createHash } from 'node:crypto';
import { threadIdOf, workflowIdFor } from '../../common/thread';

/** The caller, as authentication established it; undefined when the API runs without tokens. */
export type Owner = string | undefined;

/** A thread and the workflow that holds it, as the caller's request resolved it. */
export interface ThreadRef {
  readonly thread_id: string;
  readonly workflow_id: string;
}

/**
 * An owner's id scope: a short, stable hash of the owner's name (the name in `KEEL_API_TOKENS`,
 * never a token), so a token can rotate and the owner keeps her threads. 64 bits: a collision
 * between two owners would only share an id space, and the owner check still holds.
 */
export function scopeFor(owner: string): string;
export function scopeFor(owner: string | undefined): string | undefined;
export function scopeFor(owner: string | undefined): string | undefined {
  if (owner === undefined) return undefined;
  return createHash('sha256').update(`keel-owner\0${owner}`, 'utf8').digest('hex').slice(0, 16);
}

/** The thread `threadId` of `owner`, at the id new threads get. */
export const threadRef = (threadId: string, owner: string | undefined): ThreadRef => ({
  thread_id: threadId,
  workflow_id: workflowIdFor(threadId, scopeFor(owner)),
});

/** The id every thread had before ids were scoped: still that of a thread made then. */
export const unscopedRef = (threadId: string): ThreadRef => ({
  thread_id: threadId,
  workflow_id: workflowIdFor(threadId),
});

/** The thread a listed workflow holds, or undefined when it is not a thread's. */
export function refOf(workflowId: string): ThreadRef | undefined {
  const threadId = threadIdOf(workflowId);
  return threadId === undefined ? undefined : { thread_id: threadId, workflow_id: workflowId };
}
