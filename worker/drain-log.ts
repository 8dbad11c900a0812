/**
 * Wraps a worker's activities so that, once shutdown begins, each in-flight activity logs one line
 * as it finishes: what it was, how it ended and how long the drain waited for it.
 */
import { Context } from '@temporalio/activity';
import type { Logger } from 'pino';
import type { KeelActivities } from '../common/activities';

export interface DrainLog {
  activities: KeelActivities;
  /** Marks the start of shutdown and returns how many activities are in flight. */
  beginDrain(): number;
}

export function withDrainLog(activities: KeelActivities, logger: Logger): DrainLog {
  let inFlight = 0;
  let drainStartedAt: number | undefined;
  const wrap =
    <A extends unknown[], R>(name: string, activity: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      inFlight++;
      let outcome = 'completed';
      try {
        return await activity(...args);
      } catch (error) {
        outcome = `failed: ${error instanceof Error ? error.message : String(error)}`;
        throw error;
      } finally {
        inFlight--;
        if (drainStartedAt !== undefined) {
          const info = Context.current().info;
          logger.info(
            {
              activity: name,
              workflow_id: info.workflowExecution?.workflowId,
              attempt: info.attempt,
              outcome,
              drained_after_ms: Date.now() - drainStartedAt,
              still_in_flight: inFlight,
            },
            'drained activity',
          );
        }
      }
    };
  return {
    activities: {
      callModel: wrap('callModel', (input) => activities.callModel(input)),
      runTool: wrap('runTool', (input) => activities.runTool(input)),
      checkWorker: wrap('checkWorker', (input) => activities.checkWorker(input)),
      sendWebhook: wrap('sendWebhook', (input) => activities.sendWebhook(input)),
      resolveAssistant: wrap('resolveAssistant', (input) => activities.resolveAssistant(input)),
      admitQuotaRun: wrap('admitQuotaRun', (input) => activities.admitQuotaRun(input)),
    },
    beginDrain() {
      drainStartedAt = Date.now();
      return inFlight;
    },
  };
}
