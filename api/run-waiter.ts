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
  try {
    return await client.withAbortSignal(controller.signal, async () => {
      const stream = WorkflowStreamClient.create(client, workflowIdFor(threadId));
      for await (const item of stream.topic<KeelEvent>(eventsTopic).subscribe(fromOffset)) {
        const event = item.data;
        if (runTerminalEvents.includes(event.event) && runIdOf(event) === runId && 'run' in event.data)
          return event.data.run;
      }
      return undefined;
    });
  } catch (error) {
    if (controller.signal.aborted) return undefined;
    throw error;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onCallerGone);
  }
}
