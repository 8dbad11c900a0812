/**
 * The thread and run services joined in one object, for the callers that take one
 * (`RunServices.conversations`: run submission, A2A, MCP). The work is theirs and the gateway's
 * (decision 0525): this only names it. Routes take the services themselves; once A2A and MCP do
 * too, this view goes.
 */
import type { Client } from '@temporalio/client';
import type { RunIntake } from './gateway/run-intake';
import type { ThreadGateway } from './gateway/thread-gateway';
import type { RunService } from './runs/run-service';
import type { ThreadService } from './threads/thread-service';

export class Conversations {
  readonly client: Client;
  readonly authorize: ThreadService['authorize'];
  readonly knownThread: ThreadService['knownThread'];
  readonly resolveForCreate: ThreadService['resolveForCreate'];
  readonly threadConfig: ThreadService['threadConfig'];
  readonly newConversation: ThreadService['newConversation'];
  readonly recordAssistant: ThreadService['recordAssistant'];
  readonly transcript: ThreadService['transcript'];
  readonly transcriptLangChainJson: ThreadService['transcriptLangChainJson'];
  readonly pendingApprovals: ThreadService['pendingApprovals'];
  readonly branches: ThreadService['branches'];
  readonly submitRun: RunService['submitRun'];
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

  constructor(
    readonly gateway: ThreadGateway,
    readonly intake: RunIntake,
    readonly threads: ThreadService,
    readonly runs: RunService,
  ) {
    this.client = gateway.client;
    this.authorize = threads.authorize.bind(threads);
    this.knownThread = threads.knownThread.bind(threads);
    this.resolveForCreate = threads.resolveForCreate.bind(threads);
    this.threadConfig = threads.threadConfig.bind(threads);
    this.newConversation = threads.newConversation.bind(threads);
    this.recordAssistant = threads.recordAssistant.bind(threads);
    this.transcript = threads.transcript.bind(threads);
    this.transcriptLangChainJson = threads.transcriptLangChainJson.bind(threads);
    this.pendingApprovals = threads.pendingApprovals.bind(threads);
    this.branches = threads.branches.bind(threads);
    this.submitRun = runs.submitRun.bind(runs);
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

  /** Whether waited runs make their model calls as local activities (`KEEL_LOCAL_MODEL_CALLS`). */
  get localModelCalls(): boolean {
    return this.runs.localModelCalls;
  }
}
