/**
 * A2A push notification configs (decision 0485): what a caller registers on a task, kept on the
 * thread's workflow beside the run, so that any API process answers for them and the workflow
 * POSTs the task to each when the run ends, through Keel's signed, retried webhooks.
 */

/** One config, as A2A's `TaskPushNotificationConfig` carries it (less its task and tenant). */
export interface PushConfig {
  /** The caller's id for it (A2A's `id`), unique on its task. */
  id: string;
  url: string;
  /** Sent back in `X-A2A-Notification-Token`, so the receiver can tell the notification is its. */
  token?: string;
  /** Sent as `Authorization: <scheme> <credentials>` instead of the token, when given. */
  authentication?: { scheme: string; credentials: string };
}

export interface SetPushConfigInput {
  run_id: string;
  config: PushConfig;
}

export interface PushConfigRef {
  run_id: string;
  config_id: string;
}

/** A run's configs kept on the thread's state until the run ends and they are delivered. */
export interface RunPushConfigs {
  run_id: string;
  configs: PushConfig[];
}

/** At most this many configs per task. */
export const maxPushConfigsPerRun = 10;

/** The header A2A names for the config's token. */
export const notificationTokenHeader = 'X-A2A-Notification-Token';
