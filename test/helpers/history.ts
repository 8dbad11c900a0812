/**
 * A workflow's history as the events its code caused, one word each, for tests that count what a
 * conversation writes: the Temporal Web UI shows every one of them to an operator.
 */
import { temporal } from '@temporalio/proto';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const EventType = temporal.api.enums.v1.EventType;

export interface HistoryOutline {
  /**
   * Each event but the workflow-task bookkeeping (scheduled, started, timed out, failed), with
   * its detail: `task` (a completed workflow task), `patch <id>`, `visibility <attributes>`,
   * `schedule <activity>`, `update <name>`, `signal <name>`, or the event type in lower case.
   */
  outline: string[];
  /** All the history's events. */
  events: number;
  /**
   * Events of workflow-task attempts that did not complete (a task timed out on a loaded
   * machine, or failed): the count a history written without such a retry would not have.
   */
  retried: number;
}

function describe(event: HistoryEvent): string {
  const type = (EventType[event.eventType ?? 0] ?? String(event.eventType))
    .replace('EVENT_TYPE_', '')
    .toLowerCase();
  const marker = event.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
  if (marker) return `patch ${(JSON.parse(Buffer.from(marker).toString('utf8')) as { id: string }).id}`;
  const attributes = event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields;
  if (attributes) return `visibility ${Object.keys(attributes).sort().join(' ')}`;
  const activity = event.activityTaskScheduledEventAttributes?.activityType?.name;
  if (activity) return `schedule ${activity}`;
  const update = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name;
  if (update) return `update ${update}`;
  const signal = event.workflowExecutionSignaledEventAttributes?.signalName;
  if (signal) return `signal ${signal}`;
  if (type === 'workflow_task_completed') return 'task';
  return type;
}

export function outlineHistory(events: HistoryEvent[]): HistoryOutline {
  const count = (type: temporal.api.enums.v1.EventType) => events.filter((e) => e.eventType === type).length;
  const completed = count(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
  const retried =
    count(EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED) -
    completed +
    (count(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED) - completed) +
    count(EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT) +
    count(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED);
  const bookkeeping = new Set<number>([
    EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
    EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED,
    EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT,
    EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
  ]);
  return {
    outline: events.filter((event) => !bookkeeping.has(event.eventType ?? 0)).map(describe),
    events: events.length,
    retried,
  };
}
