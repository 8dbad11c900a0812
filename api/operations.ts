/**
 * Every operation the API serves, from the route modules that implement them: the one list
 * `/openapi.json` and the 405 answer's `Allow` are made from. A route mounted with `route()` but
 * missing here fails test/api/openapi.test.ts.
 */
import { quotaOperations } from './routes/quota';
import type { AnyOperation } from './contract';
import { activeRunOperations } from './routes/active-runs';
import { assistantOperations } from './routes/assistants';
import { approvalOperations } from './routes/approvals';
import { codecOperations } from './routes/codec';
import { cronOperations } from './routes/crons';
import { statelessRunOperations } from './routes/stateless-runs';
import { healthOperations } from './routes/health';
import { metricsOperations } from './routes/metrics';
import { runOperations } from './routes/runs';
import { threadDirectoryOperations } from './routes/thread-directory';
import { streamOperations } from './routes/streams';
import { systemOperations } from './routes/system';
import { threadStateOperations } from './routes/thread-state';
import { threadOperations } from './routes/threads';
import { storeOperations } from './routes/store';
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
