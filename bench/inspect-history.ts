/**
 * Prints the history of one conversation after a plain turn and a tool turn: every event's type
 * and payload bytes, to see what a step costs the server. `npx tsx bench/inspect-history.ts`
 */
import { randomUUID } from 'node:crypto';
import { temporal } from '@temporalio/proto';
import { workflowIdFor } from '../api/conversations';
import { startSystem } from './harness';
import { expectCompleted, turn } from './turns';

async function main(): Promise<void> {
  const system = await startSystem();
  try {
    const thread = `inspect-${randomUUID()}`;
    expectCompleted(await turn(system.apiUrl, thread, 'hello'), 'plain turn');
    const handle = system.client.workflow.getHandle(workflowIdFor(thread));
    const before = (await handle.fetchHistory()).events?.length ?? 0;
    expectCompleted(await turn(system.apiUrl, thread, 'run: true'), 'tool turn');
    const history = await handle.fetchHistory();
    const types = temporal.api.enums.v1.EventType;
    for (const event of (history.events ?? []).slice(before)) {
      const bytes = temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
      const name = types[event.eventType ?? 0] ?? String(event.eventType);
      let detail = '';
      const update = event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name;
      if (update) detail = `update ${update}`;
      const signal = event.workflowExecutionSignaledEventAttributes?.signalName;
      if (signal) detail = `signal ${signal}`;
      const activity = event.activityTaskScheduledEventAttributes?.activityType?.name;
      if (activity) detail = `activity ${activity}`;
      process.stdout.write(
        `${String(event.eventId).padStart(4)} ${name.replace('EVENT_TYPE_', '').padEnd(40)} ${String(bytes).padStart(7)} B ${detail}\n`,
      );
    }
    process.stdout.write(`events for the tool turn: ${(history.events?.length ?? 0) - before}\n`);
  } finally {
    await system.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
