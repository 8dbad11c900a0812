/**
 * The thread and run services joined in one object, for the callers that still take one
 * (`RunServices.conversations`: A2A and MCP, and the run waiter they share). The work is the
 * services' and the gateway's (decision 0525): this only names it. Everything else takes the
 * services themselves; once A2A and MCP do too, this view goes.
 */
import type { Client } from '@temporalio/client';
import type { ThreadGateway } from './gateway/thread-gateway';
import type { RunService } from './runs/run-service';
import type { ThreadService } from './threads/thread-service';

export class Conversations {
  readonly client: Client;
  readonly authorize: ThreadService['authorize'];
  readonly pendingApprovals: ThreadService['pendingApprovals'];
  readonly getRun: RunService['getRun'];
  readonly listRuns: RunService['listRuns'];
  readonly peekInterruptedRun: RunService['peekInterruptedRun'];
  readonly deferRun: RunService['deferRun'];
  readonly cancelRun: RunService['cancelRun'];
  readonly decideApproval: RunService['decideApproval'];
  readonly checkWebhook: RunService['checkWebhook'];
  readonly setPushConfig: RunService['setPushConfig'];
  readonly pushConfigs: RunService['pushConfigs'];
  readonly deletePushConfig: RunService['deletePushConfig'];
  readonly currentOffset: ThreadGateway['currentOffset'];
  readonly streamBase: ThreadGateway['streamBase'];

  constructor(gateway: ThreadGateway, threads: ThreadService, runs: RunService) {
    this.client = gateway.client;
    this.authorize = threads.authorize.bind(threads);
    this.pendingApprovals = threads.pendingApprovals.bind(threads);
    this.getRun = runs.getRun.bind(runs);
    this.listRuns = runs.listRuns.bind(runs);
    this.peekInterruptedRun = runs.peekInterruptedRun.bind(runs);
    this.deferRun = runs.deferRun.bind(runs);
    this.cancelRun = runs.cancelRun.bind(runs);
    this.decideApproval = runs.decideApproval.bind(runs);
    this.checkWebhook = runs.checkWebhook.bind(runs);
    this.setPushConfig = runs.setPushConfig.bind(runs);
    this.pushConfigs = runs.pushConfigs.bind(runs);
    this.deletePushConfig = runs.deletePushConfig.bind(runs);
    this.currentOffset = gateway.currentOffset.bind(gateway);
    this.streamBase = gateway.streamBase.bind(gateway);
  }
}
