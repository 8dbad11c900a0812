/** Reads a conversation's durable events from the start until a run's terminal event. */
import type { Client } from '@temporalio/client';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import { workflowIdFor } from '../../common/thread';
import { eventsTopic, runIdOf, runTerminalEvents, type KeelEvent } from '../../common/events';

export async function eventsUntilRunEnds(
  client: Client,
  threadId: string,
  runId: string,
  timeoutMs = 30_000,
): Promise<KeelEvent[]> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const events: KeelEvent[] = [];
  try {
    await client.withAbortSignal(controller.signal, async () => {
      const stream = WorkflowStreamClient.create(client, workflowIdFor(threadId));
      for await (const item of stream.topic<KeelEvent>(eventsTopic).subscribe(0)) {
        events.push(item.data);
        if (runTerminalEvents.includes(item.data.event) && runIdOf(item.data) === runId) return;
      }
    });
  } finally {
    clearTimeout(timer);
  }
  return events;
}
