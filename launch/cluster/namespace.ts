/**
 * What a fresh cluster lacks that the dev server makes for itself: Keel's namespace and its
 * search attributes (on SQL visibility they are registered per namespace). Also the probe a
 * rolling deploy waits on: a new worker host counts once Temporal sees it polling.
 */
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import type { Logger } from 'pino';
import { allSearchAttributes } from '../../common/search-attributes';
import { ensureSearchAttributes } from '../../worker/search-attributes';

/** Closed conversations are kept this long before Temporal deletes them. */
const retention = msToTs('30 days');

function isNotFound(error: unknown): boolean {
  return (error as { code?: number }).code === 5;
}

/** Registers the namespace when it is missing, then Keel's search attributes on it. */
export async function ensureNamespace(
  connection: Connection,
  namespace: string,
  logger: Logger,
): Promise<void> {
  // Right after start the frontend may not yet reach history or persistence: retry for a while.
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await connection.workflowService.describeNamespace({ namespace });
      break;
    } catch (error) {
      if (isNotFound(error)) {
        try {
          await connection.workflowService.registerNamespace({
            namespace,
            workflowExecutionRetentionPeriod: retention,
          });
        } catch (registerError) {
          // Another process registered it first.
          if ((registerError as { code?: number }).code !== 6) throw registerError;
        }
        continue;
      }
      if (Date.now() > deadline) throw error;
      await sleep(500);
    }
  }
  // A new namespace reaches each service's registry on its next refresh (every 2 s).
  for (;;) {
    try {
      await ensureSearchAttributes(connection, namespace, logger, { required: true });
      break;
    } catch (error) {
      if (!isNotFound(error) || Date.now() > deadline) throw error;
      await sleep(500);
    }
  }
  // Each service learns of new attributes when it refreshes the namespace (every 2 s): wait
  // until the frontend lists them, so a conversation's first upsert cannot be refused.
  const names = allSearchAttributes.map((key) => key.name);
  while (Date.now() < deadline) {
    const listed = await connection.operatorService.listSearchAttributes({ namespace });
    const known = Object.keys(listed.customAttributes ?? {});
    if (names.every((name) => known.includes(name))) return;
    await sleep(500);
  }
  throw new Error(`Keel's search attributes did not appear on namespace ${namespace}`);
}

/** The identity a Keel worker process polls with (the SDK's default, `pid@host`), before its live text URL. */
export function workerIdentity(pid: number): string {
  return `${pid}@${hostname()}`;
}

/** Whether a worker with this identity polls the task queue for workflow tasks. */
export async function isPolling(
  connection: Connection,
  namespace: string,
  taskQueue: string,
  identity: string,
): Promise<boolean> {
  const described = await connection.workflowService.describeTaskQueue({
    namespace,
    taskQueue: { name: taskQueue },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  return (described.pollers ?? []).some(
    (poller) => poller.identity === identity || poller.identity?.startsWith(`${identity} `) === true,
  );
}
