/**
 * Keel's turns as its Temporal history records them: how many events each turn wrote, and when
 * its execution started (the turn's first workflow task) and ended (its last one completed).
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { workflowIdFor } from '../../common/thread';
import { at } from '../history-spans';

const EventType = temporal.api.enums.v1.EventType;

export interface KeelTurnRecord {
  /** Events from the turn's first workflow task to the next turn's (or the history's end). */
  events: number;
  /** The turn's first workflow task scheduled and started, its last one completed (epoch ms). */
  scheduled_ms: number;
  started_ms: number;
  completed_ms: number;
  /** The thread's first turn also starts the workflow: its count includes the start. */
  first: boolean;
}

/** One record per `submitInput` update in the thread's current workflow run. */
export async function keelTurns(client: Client, threadId: string): Promise<KeelTurnRecord[]> {
  const events = (await client.workflow.getHandle(workflowIdFor(threadId)).fetchHistory()).events ?? [];
  const begins: number[] = [];
  for (const [index, event] of events.entries()) {
    if (event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name !== 'submitInput')
      continue;
    // The turn begins with the workflow task that carried the update.
    let begin = index;
    while (begin > 0 && events[begin]!.eventType !== EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED) begin--;
    begins.push(begin);
  }
  return begins.map((begin, position) => {
    const end = begins[position + 1] ?? events.length;
    const started = events
      .slice(begin, end)
      .find((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED);
    const completed = events
      .slice(begin, end)
      .findLast((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
    if (started === undefined || completed === undefined)
      throw new Error(`thread ${threadId}: turn ${position + 1} has no completed workflow task`);
    return {
      events: position === 0 ? end : end - begin,
      scheduled_ms: at(events[begin]!),
      started_ms: at(started),
      completed_ms: at(completed),
      first: position === 0,
    };
  });
}
