/**
 * Time measured by the server: spans between history events, free of how long a client takes
 * to hear that a workflow or a run finished. Used for the per-step comparison.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const EventType = temporal.api.enums.v1.EventType;

export const at = (event: HistoryEvent): number =>
  Number(event.eventTime?.seconds ?? 0) * 1000 + (event.eventTime?.nanos ?? 0) / 1e6;

/**
 * Milliseconds the activities completed among `events` ran, each from its `ACTIVITY_TASK_STARTED`
 * to its `ACTIVITY_TASK_COMPLETED` as the server recorded them: the work itself (a sandboxed
 * command, a model call) and the worker's handling of the task around it.
 */
export function activityMs(events: HistoryEvent[], all: HistoryEvent[] = events): number {
  const byId = new Map(all.map((event) => [String(event.eventId), event]));
  let ms = 0;
  for (const event of events) {
    const startedId = event.activityTaskCompletedEventAttributes?.startedEventId;
    if (startedId === undefined || startedId === null) continue;
    const started = byId.get(String(startedId));
    if (started !== undefined) ms += at(event) - at(started);
  }
  return ms;
}

export interface WorkflowSpan {
  /** From the workflow's start to its completion, as the server recorded them. */
  ms: number;
  /** Of which its activities ran (`activityMs`). */
  activityMs: number;
}

export async function workflowSpan(client: Client, workflowId: string): Promise<WorkflowSpan> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const started = events.find((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
  const completed = events.find((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
  if (started === undefined || completed === undefined) throw new Error(`${workflowId} has not completed`);
  return { ms: at(completed) - at(started), activityMs: activityMs(events) };
}

export interface TurnSpan {
  /** The turn's user text. */
  text: string;
  ms: number;
  /** Of which its activities ran (`activityMs`). */
  activityMs: number;
  /** History events the turn wrote: from the workflow task that took it to the next turn's. */
  events: number;
}

/**
 * Each turn of a conversation's current run: from the workflow task that took its `submitInput`
 * update to the last workflow task before the next turn's (the one that ended the run).
 */
export async function turnSpans(client: Client, workflowId: string): Promise<TurnSpan[]> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const starts: Array<{ index: number; text: string }> = [];
  const { payloadCodecs, payloadConverter } = client.options.loadedDataConverter;
  for (const [index, event] of events.entries()) {
    const request = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input;
    if (request?.name !== 'submitInput') continue;
    // The history holds the payload as stored: encrypted, so decoded with the client's codecs.
    let payloads = request.args?.payloads?.slice(0, 1) ?? [];
    for (const codec of [...payloadCodecs].reverse()) payloads = await codec.decode(payloads);
    const input = payloadConverter.fromPayload<{ content: Array<{ text?: string }> }>(payloads[0]!);
    // The turn begins with the workflow task that carried the update.
    let begin = index;
    while (begin > 0 && events[begin]!.eventType !== EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED) begin--;
    starts.push({ index: begin, text: input.content.map((block) => block.text ?? '').join('') });
  }
  return starts.map((start, position) => {
    const end = starts[position + 1]?.index ?? events.length;
    let last = end - 1;
    while (last > start.index && events[last]!.eventType !== EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
      last--;
    return {
      text: start.text,
      ms: at(events[last]!) - at(events[start.index]!),
      activityMs: activityMs(events.slice(start.index, end), events),
      events: end - start.index,
    };
  });
}
