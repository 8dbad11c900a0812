/**
 * Every `ApplicationFailure.type` Keel raises, in one place. Workflows and the API branch on
 * these strings, never on error classes, because failures cross process and language boundaries.
 */
export const FailureType = {
  // Model calls: retryable.
  modelRateLimited: 'ModelRateLimited',
  modelOverloaded: 'ModelOverloaded',
  modelUnavailable: 'ModelUnavailable',
  modelConnection: 'ModelConnectionError',
  modelStalled: 'ModelStreamStalled',
  // Model calls: not retryable.
  modelRequestInvalid: 'ModelRequestInvalid',
  modelAuth: 'ModelAuthenticationFailed',
  modelSpendLimit: 'ModelSpendLimitReached',
  modelNotConfigured: 'ModelNotConfigured',
  /** The model step an activity was asked for is no longer the workflow's current one. */
  modelStepNotCurrent: 'ModelStepNotCurrent',
  // Tools.
  toolNotFound: 'ToolNotFound',
  toolInputInvalid: 'ToolInputInvalid',
  toolInterrupted: 'ToolInterrupted',
  toolFailed: 'ToolFailed',
  workspaceViolation: 'WorkspaceViolation',
  // Message validation (update validators).
  invalidInput: 'InvalidInput',
  threadBusy: 'ThreadBusy',
  threadClosed: 'ThreadClosed',
  runExists: 'RunExists',
  runNotFound: 'RunNotFound',
  /** A fork names a checkpoint the thread does not hold. */
  checkpointNotFound: 'CheckpointNotFound',
  /** A run that has not finished cannot be deleted (cancel it first). */
  runActive: 'RunActive',
  approvalNotPending: 'ApprovalNotPending',
  approvalNotFound: 'ApprovalNotFound',
  /** No assistant by that id (or it was deleted). */
  assistantNotFound: 'AssistantNotFound',
  /** An assistant has no version by that number. */
  versionNotFound: 'VersionNotFound',
  // Webhooks.
  webhookFailed: 'WebhookDeliveryFailed',
  /** The webhook's URL leads to an address Keel does not reach (not retried). */
  webhookRefused: 'WebhookRefused',
  // Any activity whose worker shut down past the grace period (retryable).
  workerShutdown: 'WorkerShutdown',
  // Runs.
  budgetExceeded: 'BudgetExceeded',
  quotaExceeded: 'QuotaExceeded',
  approvalTimeout: 'ApprovalTimeout',
  maxSteps: 'MaxStepsReached',
  cancelled: 'Cancelled',
  internal: 'InternalError',
} as const;
export type FailureType = (typeof FailureType)[keyof typeof FailureType];

/** Model failures that no retry can fix: the activity fails at once with these. */
export const nonRetryableModelFailures: readonly FailureType[] = [
  FailureType.modelRequestInvalid,
  FailureType.modelAuth,
  FailureType.modelSpendLimit,
  FailureType.modelNotConfigured,
  FailureType.modelStepNotCurrent,
];

export function isFailureType(value: unknown): value is FailureType {
  return typeof value === 'string' && (Object.values(FailureType) as string[]).includes(value);
}
