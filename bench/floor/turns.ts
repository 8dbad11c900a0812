/**
 * The floor conversation (bench/floor/workflows.ts) driven as Keel's API drives a thread, and its
 * turns read back from its history. Used by bench/floor/turn-cost.ts.
 */
import { randomUUID } from 'node:crypto';
import { type Client, WithStartWorkflowOperation, WorkflowUpdateStage } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { at } from '../history-spans';
import { type FloorConversationOptions, floorTurnUpdate } from './conversation';
import type { floorConversation } from './workflows';

const EventType = temporal.api.enums.v1.EventType;
type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/**
 * Takes `turns` turns one after the other on the conversation `workflowId`, as Keel's API takes a
 * `runs/wait`: the first by update-with-start (the thread's workflow started if it is not
 * running), the others by update, each call waiting for the update's acceptance and then for its
 * answer. Resolves with each turn's milliseconds at the client.
 */
export async function converse(
  client: Client,
  taskQueue: string,
  options: FloorConversationOptions,
  workflowId: string,
  turns: number,
  payload: string,
): Promise<number[]> {
  const latencies: number[] = [];
  for (let turn = 0; turn < turns; turn++) {
    const input = { turn_id: randomUUID(), payload };
    const began = performance.now();
    const update =
      turn === 0
        ? await client.workflow.startUpdateWithStart(floorTurnUpdate, {
            args: [input],
            waitForStage: WorkflowUpdateStage.ACCEPTED,
            startWorkflowOperation: new WithStartWorkflowOperation<typeof floorConversation>(
              'floorConversation',
              { workflowId, taskQueue, args: [options], workflowIdConflictPolicy: 'USE_EXISTING' },
            ),
          })
        : await client.workflow.getHandle(workflowId).startUpdate(floorTurnUpdate, {
            args: [input],
            waitForStage: WorkflowUpdateStage.ACCEPTED,
          });
    const answer = await update.result();
    latencies.push(performance.now() - began);
    if (answer !== payload) throw new Error(`${workflowId}: turn ${turn + 1} answered something else`);
  }
  return latencies;
}

export interface FloorTurn {
  /** The thread's first turn: its events include the workflow's start. */
  first: boolean;
  events: number;
  /** The turn's first workflow task started → its last one completed (server clock). */
  executionMs: number;
  /** Update accepted → update completed (server clock). */
  updateMs: number;
}

/**
 * The turns of one conversation's history: each begins with the workflow task that carried its
 * update (the thread's first also holds the workflow's start) and ends where the next begins, or
 * at the closing signal.
 */
export function floorTurns(events: HistoryEvent[]): FloorTurn[] {
  const begins: number[] = [];
  for (const [index, event] of events.entries()) {
    const name = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name;
    if (name !== floorTurnUpdate.name) continue;
    let begin = index;
    while (begin > 0 && events[begin]!.eventType !== EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED) begin--;
    begins.push(begin);
  }
  const close = events.findIndex(
    (event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED,
  );
  return begins.map((begin, position) => {
    const end = begins[position + 1] ?? (close === -1 ? events.length : close);
    const turn = events.slice(begin, end);
    const find = (type: temporal.api.enums.v1.EventType) => turn.find((event) => event.eventType === type);
    const started = find(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED);
    const completed = turn.findLast(
      (event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
    );
    const accepted = find(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED);
    const answered = find(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED);
    if (started === undefined || completed === undefined || accepted === undefined || answered === undefined)
      throw new Error(`turn ${position + 1} of a floor conversation is incomplete`);
    return {
      first: position === 0,
      events: position === 0 ? end : end - begin,
      executionMs: at(completed) - at(started),
      updateMs: at(answered) - at(accepted),
    };
  });
}
