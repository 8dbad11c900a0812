/**
 * Waiting for a run without polling: follow the conversation's event stream from a known offset
 * until the run's terminal event. Giving up only stops the waiting; the run goes on.
 */
import type { Client } from '@temporalio/client';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { eventsTopic, runIdOf, runTerminalEvents, type KeelEvent } from '../common/events';
import type { Run } from '../common/run';
import { workflowIdFor } from './conversations';

/** The stream offset now: events published after this call are at or beyond it. */
export function currentOffset(client: Client, threadId: string): Promise<number> {
  return WorkflowStreamClient.create(client, workflowIdFor(threadId)).getOffset();
}

/**
 * Resolves with the finished run, or undefined when `timeoutMs` passes first (or the caller
 * goes away, through `signal`). The in-flight poll is cancelled either way.
 */
export async function waitForRun(
  client: Client,
  threadId: string,
  runId: string,
  fromOffset: number,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Run | undefined> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const onCallerGone = (): void => controller.abort();
  signal?.addEventListener('abort', onCallerGone, { once: true });
  // The stream's in-flight poll does not always end with the abort: stop waiting on it regardless.
  const abandoned = new Promise<undefined>((resolve) =>
    controller.signal.addEventListener('abort', () => resolve(undefined), { once: true }),
  );
  try {
    const following = client.withAbortSignal(controller.signal, async () => {
      const stream = WorkflowStreamClient.create(client, workflowIdFor(threadId));
      for await (const item of stream.topic<KeelEvent>(eventsTopic).subscribe(fromOffset)) {
        const event = item.data;
        if (runTerminalEvents.includes(event.event) && runIdOf(event) === runId && 'run' in event.data)
          return event.data.run;
      }
      return undefined;
    });
    following.catch(() => undefined);
    return await Promise.race([following, abandoned]);
  } catch (error) {
    if (controller.signal.aborted) return undefined;
    throw error;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onCallerGone);
  }
}
