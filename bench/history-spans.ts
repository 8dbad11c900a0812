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

/** Milliseconds from a workflow's start to its completion, as the server recorded them. */
export async function workflowSpan(client: Client, workflowId: string): Promise<number> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const started = events.find((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED);
  const completed = events.find((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED);
  if (started === undefined || completed === undefined) throw new Error(`${workflowId} has not completed`);
  return at(completed) - at(started);
}

export interface TurnSpan {
  /** The turn's user text. */
  text: string;
  ms: number;
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
    return { text: start.text, ms: at(events[last]!) - at(events[start.index]!), events: end - start.index };
  });
}
