/**
 * Which run events become webhook deliveries: a run created with `webhook` is POSTed when it is
 * deferred and when it ends. Pure: the reducer adds a `sendWebhook` command for each.
 */
import type { SendWebhookInput } from '../../common/activities';
import type { Command } from './transitions';

const webhookEvents: ReadonlySet<string> = new Set([
  'run.deferred',
  'run.completed',
  'run.failed',
  'run.cancelled',
]);

export function webhookDeliveries(commands: readonly Command[]): SendWebhookInput[] {
  const deliveries: SendWebhookInput[] = [];
  for (const command of commands) {
    if (command.type !== 'emit' || !webhookEvents.has(command.event.event)) continue;
    if (!('run' in command.event.data)) continue;
    const { run } = command.event.data;
    if (run.webhook === undefined) continue;
    deliveries.push({
      url: run.webhook,
      // Stable across retries and replays: one id per run and event.
      webhook_id: `msg_${run.run_id}_${run.status}`,
      timestamp: Math.floor(Date.parse(run.updated_at) / 1000),
      payload: {
        type: command.event.event,
        timestamp: run.updated_at,
        data: { run, ...(run.output === undefined ? {} : { output: run.output }) },
      },
    });
  }
  return deliveries;
}

/** The `sendWebhook` commands for the run events among `commands`. */
export const webhookCommands = (commands: readonly Command[]): Command[] =>
  webhookDeliveries(commands).map((delivery) => ({ type: 'sendWebhook', delivery }));
