import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** Keel's search attributes: find and filter conversations in the Web UI and through visibility. */
export const searchAttributes = {
  status: defineSearchAttributeKey('KeelStatus', SearchAttributeType.KEYWORD),
  owner: defineSearchAttributeKey('KeelOwner', SearchAttributeType.KEYWORD),
  model: defineSearchAttributeKey('KeelModel', SearchAttributeType.KEYWORD),
  costUsd: defineSearchAttributeKey('KeelCostUsd', SearchAttributeType.DOUBLE),
  turns: defineSearchAttributeKey('KeelTurns', SearchAttributeType.INT),
  /** Statuses of the thread's unfinished runs (`queued`, `running`, `deferred`): `GET /runs?status=…`. */
  runStatuses: defineSearchAttributeKey('KeelRunStatuses', SearchAttributeType.KEYWORD_LIST),
} as const;

export const allSearchAttributes = Object.values(searchAttributes);
