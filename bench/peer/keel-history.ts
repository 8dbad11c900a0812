/**
 * Keel's turns as its Temporal history records them: how many events each turn wrote, and when
 * its execution started (the turn's first workflow task) and ended (its last one completed).
 */
import type { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { submitInputUpdate, userMessageSignal } from '../../common/messages';
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
  /**
   * How the input reached the thread first: by the `submitInput` update, or by the `userMessage`
   * signal the API also sends when the update is not answered within 250 ms (api/gateway/intake.ts).
   */
  by: 'update' | 'signal';
}

/** One record per run in the thread's current workflow run, in order. */
export async function keelTurns(client: Client, threadId: string): Promise<KeelTurnRecord[]> {
  const events = (await client.workflow.getHandle(workflowIdFor(threadId)).fetchHistory()).events ?? [];
  const { payloadCodecs, payloadConverter } = client.options.loadedDataConverter;
  const runIdOf = async (payload: Payload | undefined): Promise<string> => {
    // The history holds payloads as stored: encrypted, so decoded with the client's codecs.
    let payloads = payload === undefined ? [] : [payload];
    for (const codec of [...payloadCodecs].reverse()) payloads = await codec.decode(payloads);
    return payloadConverter.fromPayload<{ run_id: string }>(payloads[0]!).run_id;
  };
  const seen = new Set<string>();
  const starts: Array<{ begin: number; by: KeelTurnRecord['by'] }> = [];
  for (const [index, event] of events.entries()) {
    const update = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input;
    const signal = event.workflowExecutionSignaledEventAttributes;
    let by: KeelTurnRecord['by'];
    let runId: string;
    if (update?.name === submitInputUpdate.name) {
      by = 'update';
      runId = await runIdOf(update.args?.payloads?.[0] ?? undefined);
    } else if (signal?.signalName === userMessageSignal.name) {
      by = 'signal';
      runId = await runIdOf(signal.input?.payloads?.[0] ?? undefined);
    } else continue;
    // The same input by update and by signal: the first one the history holds started the turn.
    if (seen.has(runId)) continue;
    seen.add(runId);
    // An update's turn begins with the workflow task that carried it; a signal's, with itself.
    let begin = index;
    if (by === 'update')
      while (begin > 0 && events[begin]!.eventType !== EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED) begin--;
    starts.push({ begin, by });
  }
  return starts.map(({ begin, by }, position) => {
    const end = starts[position + 1]?.begin ?? events.length;
    const turn = events.slice(begin, end);
    const scheduled = turn.find((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED);
    const started = turn.find((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED);
    const completed = turn.findLast(
      (event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
    );
    if (scheduled === undefined || started === undefined || completed === undefined)
      throw new Error(`thread ${threadId}: turn ${position + 1} has no completed workflow task`);
    return {
      events: position === 0 ? end : end - begin,
      scheduled_ms: at(scheduled),
      started_ms: at(started),
      completed_ms: at(completed),
      first: position === 0,
      by,
    };
  });
}
