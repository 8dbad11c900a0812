/** Builds the activity implementations a worker registers, from its configuration. */
import type { KeelActivities } from '../common/activities';
import type { KeelConfig } from '../platform/config';
import { createCallModel } from './call-model';
import { checkWorker } from './check-worker';
import type { StepMessagesReader } from './model-messages';
import type { LiveTextHub } from './live-text';
import { WorkerMetrics } from '../telemetry/worker-metrics';
import { createModelClients, type ModelClients } from './model/clients';
import { type ActivityTelemetry, observeModelCall, observeModelClients, observeToolCall } from './observe';
import { PriceTable } from './model/prices';
import { resolveAssistant } from './resolve-assistant';
import { createAdmitQuotaRun } from './admit-quota-run';
import { createRunTool } from './run-tool';
import { createSendWebhook } from './send-webhook';
import { Sandbox } from './tools/sandbox';
import { spawnAgentTool } from './tools/spawn-agent';
import { memoryTools } from './tools/memory';
import { configuredStore } from '../store/configured-store';
import type { Store } from '../store/store';
import {
  bashTool,
  deleteFileTool,
  editFileTool,
  listFilesTool,
  readFileTool,
  ToolRegistry,
  writeFileTool,
} from './tools';

export const builtinTools = [
  bashTool,
  readFileTool,
  writeFileTool,
  editFileTool,
  listFilesTool,
  deleteFileTool,
  spawnAgentTool,
  ...memoryTools,
];

export interface ActivityDependencies {
  config: Pick<
    KeelConfig,
    | 'workspacesDir'
    | 'providers'
    | 'pricesFile'
    | 'childEnvironment'
    | 'webhookSecret'
    | 'webhookAllowHosts'
    | 'sandbox'
    | 'store'
    | 'storeIndex'
    | 'encryption'
    | 'embeddings'
    | 'quota'
  >;
  registry?: ToolRegistry;
  clients?: ModelClients;
  /** Built from `config.sandbox` unless given (the worker checks it at start). */
  sandbox?: Sandbox;
  /** Where spans and metrics go; unless given, metrics no one reads and the global tracer. */
  telemetry?: ActivityTelemetry;
  /** Reads (and keeps) the messages of long conversations. @default a reader of its own */
  messages?: StepMessagesReader;
  /** The live channel's text of model calls (decision 0340). @default the history channel */
  live?: LiveTextHub | undefined;
  /**
   * The identity this worker polls with, carried on its tool calls' heartbeats so that one given
   * up on names its worker (decision 0412). @default none: such a call's result cannot tell
   */
  identity?: string | undefined;
  /**
   * The Store the memory tools use (decision 0450). @default one on `config.store` with Keel's
   * keys, opened at the first memory call, so a worker whose threads use no memory opens nothing
   */
  store?: Store;
}

export function createActivities({
  config,
  registry,
  clients,
  sandbox,
  messages,
  live,
  identity,
  store,
  telemetry = { metrics: new WorkerMetrics(), captureContent: false },
}: ActivityDependencies): KeelActivities {
  const tools = registry ?? new ToolRegistry(builtinTools);
  const modelClients = clients ?? createModelClients(config.providers);
  return {
    callModel: observeModelCall(
      createCallModel({
        clients: observeModelClients(modelClients, telemetry.metrics),
        registry: tools,
        prices: PriceTable.load(config.pricesFile),
        ...(messages === undefined ? {} : { messages }),
        live,
      }),
      telemetry,
    ),
    runTool: observeToolCall(
      createRunTool({
        registry: tools,
        workspacesDir: config.workspacesDir,
        environment: config.childEnvironment,
        sandbox: sandbox ?? new Sandbox(config.sandbox, config.childEnvironment.PATH),
        identity,
        store: store ?? configuredStore(config),
      }),
      telemetry,
    ),
    checkWorker,
    sendWebhook: createSendWebhook({ secret: config.webhookSecret, allowHosts: config.webhookAllowHosts }),
    resolveAssistant,
    admitQuotaRun: createAdmitQuotaRun({
      limits: config.quota,
      refused: (reason) => telemetry.metrics.refusals.inc({ reason }),
    }),
  };
}
