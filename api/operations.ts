/**
 * Every operation the API serves, from the route modules that implement them: the one list
 * `/openapi.json` and the 405 answer's `Allow` are made from. A route mounted with `route()` but
 * missing here fails test/api/openapi.test.ts.
 */
import { quotaOperations } from './quotas/quota-routes';
import type { AnyOperation } from './contract';
import { activeRunOperations } from './runs/active-routes';
import { assistantOperations } from './assistants/assistant-routes';
import { approvalOperations } from './threads/approval-routes';
import { codecOperations } from './system/codec-routes';
import { cronOperations } from './crons/cron-routes';
import { statelessRunOperations } from './runs/stateless-routes';
import { healthOperations } from './system/health-routes';
import { metricsOperations } from './system/metrics-routes';
import { runOperations } from './runs/run-routes';
import { threadDirectoryOperations } from './threads/directory-routes';
import { streamOperations } from './streams/stream-routes';
import { systemOperations } from './system/system-routes';
import { threadStateOperations } from './threads/state-routes';
import { threadOperations } from './threads/thread-routes';
import { storeOperations } from './store/store-routes';
import { openApiOperation } from './openapi';
import { webPage } from './web-page';

export const operations: readonly AnyOperation[] = [
  webPage,
  ...healthOperations,
  ...metricsOperations,
  ...systemOperations,
  openApiOperation,
  ...assistantOperations,
  ...threadOperations,
  ...threadDirectoryOperations,
  ...threadStateOperations,
  ...approvalOperations,
  ...runOperations,
  ...streamOperations,
  ...activeRunOperations,
  ...quotaOperations,
  ...statelessRunOperations,
  ...cronOperations,
  ...storeOperations,
  ...codecOperations,
];
