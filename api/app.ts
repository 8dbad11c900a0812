/** The Express app: JSON in and out, thin routes over the feature services, one error middleware. */
import express, { type Express } from 'express';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { KeelConfig } from '../platform/config';
import { ApiMetrics } from '../telemetry/api-metrics';
import { authenticate } from './auth';
import { cors } from './cors';
import { hostCheck } from './host-check';
import { jsonBodies, requireJsonBodies } from './json-body';
import { originCheck } from './origin-check';
import { Assistants } from './assistants/assistant-service';
import { assistantRoutes } from './assistants/assistant-routes';
import { systemRoutes } from './system/system-routes';
import { threadStateRoutes } from './threads/state-routes';
import { Conversations } from './conversations';
import { RunIntake } from './gateway/run-intake';
import { ThreadGateway } from './gateway/thread-gateway';
import { RunService } from './runs/run-service';
import { ThreadService } from './threads/thread-service';
import { methodGate, route } from './contract';
import { ApiError, errorMiddleware } from './errors';
import { listingClient } from './gateway/listing-client';
import { openApiDocument, openApiOperation } from './openapi';
import { formatHostEntry } from '../platform/network-hosts';
import { operations } from './operations';
import { activeRunRoutes } from './runs/active-routes';
import { approvalRoutes } from './threads/approval-routes';
import { metricsRoutes } from './system/metrics-routes';
import { observeRequests } from './observe-requests';
import { defaultSseTimings, type SseLocals } from './streams/sse';
import { codecRoutes, codecUiRoutes, maxCodecBodyBytes } from './system/codec-routes';
import { healthRoutes } from './system/health-routes';
import { threadDirectoryRoutes } from './threads/directory-routes';
import { ThreadDirectory } from './threads/thread-directory';
import { runRoutes } from './runs/run-routes';
import { cronRoutes } from './crons/cron-routes';
import { Crons } from './crons/cron-service';
import { statelessRunRoutes } from './runs/stateless-routes';
import { streamRoutes } from './streams/stream-routes';
import { beatRequester } from './streams/live-beat';
import { liveTextSource } from './streams/live-text-reader';
import { mcpRoutes } from './mcp/mcp-route';
import { a2aRoutes } from './a2a/a2a-route';
import { threadRoutes } from './threads/thread-routes';
import { webPageRoutes } from './web-page';
import { storeRoutes } from './store/store-routes';
import type { Store } from '../store/store';
import { configuredStore } from '../store/configured-store';
import { OwnerQuotas } from './quotas/owner-quotas';
import { quotaRoutes } from './quotas/quota-routes';

/** Request bodies above this are refused with 413 (run input itself is limited to 100,000 characters). */
export const maxBodyBytes = 1024 * 1024;

export interface AppOptions {
  client: Client;
  config: Pick<
    KeelConfig,
    | 'taskQueue'
    | 'model'
    | 'defaults'
    | 'api'
    | 'temporal'
    | 'webhookAllowHosts'
    | 'encryption'
    | 'sandbox'
    | 'tokens'
    | 'store'
    | 'storeIndex'
    | 'embeddings'
    | 'quota'
  >;
  logger: Logger;
  /** Aborted when the API begins to stop: waiting requests answer at once. */
  stopping?: AbortSignal;
  /** Served at `/metrics`. @default a registry of its own, without process metrics */
  metrics?: ApiMetrics;
  /** The Store API's items. @default a store on `config.store`, opened at its first call */
  store?: Store;
}

export { configuredStore };

export function createApp({
  client,
  config,
  logger,
  stopping,
  metrics = new ApiMetrics(),
  store = configuredStore(config),
}: AppOptions): Express {
  const app = express();
  (app.locals as SseLocals).streamClients = metrics.streamClients;
  app.use(observeRequests(metrics));
  app.disable('x-powered-by');
  app.set('etag', false);
  // Before anything else: a name this API does not serve is a rebinding page's (decision 0311).
  app.use(hostCheck(config.api.allowedHosts));
  // The Temporal Web UI decrypts through /codec from its own origin, whatever the API allows.
  app.use('/codec', cors(config.encryption.corsOrigins));
  app.use(cors(config.api.corsOrigins));
  // A page elsewhere can send a body-less or no-cors write without a preflight (decision 0317).
  const apiOrigins = originCheck(config.api.corsOrigins, 'KEEL_API_CORS_ORIGINS');
  const codecOrigins = originCheck(config.encryption.corsOrigins, 'KEEL_CODEC_CORS_ORIGINS');
  app.use((request, response, next) => {
    const underCodec = request.path === '/codec' || request.path.startsWith('/codec/');
    (underCodec ? codecOrigins : apiOrigins)(request, response, next);
  });
  // Only JSON says it is JSON: a page can send any other type without a preflight (decision 0310).
  app.use(requireJsonBodies());
  // The web chat is public; the API calls it makes carry the person's token.
  app.use(webPageRoutes());
  const codec = codecRoutes(client, config.temporal.namespace);
  // The Web UI's codec endpoint carries its own secret, for it cannot send an API token.
  app.use('/codec', jsonBodies(maxCodecBodyBytes));
  app.use(codecUiRoutes(codec, config.encryption.uiToken));
  // Before any body is read: a caller without a token is answered at once, not after its upload.
  app.use(authenticate(config.api.tokens));
  // A Stop reaches the model call's worker at once, not at its next slow beat (decision 0420).
  const askToBeat = beatRequester(client, config);
  // The one door to the conversation workflows (decision 0525), and the services over it.
  const gateway = new ThreadGateway(client, config);
  const intake = new RunIntake(gateway, config, askToBeat);
  const threads = new ThreadService(gateway, intake, config);
  const runs = new RunService(gateway, intake, config);
  const conversations = new Conversations(gateway, threads, runs);
  // Listings and deletes go on past a thread whose key was removed (api/gateway/listing-client.ts).
  const threadDirectory = new ThreadDirectory(listingClient(client), config.taskQueue, askToBeat);
  const assistants = new Assistants(client, config.taskQueue, config.model.default);
  const quotas = new OwnerQuotas(client, config.quota, config.taskQueue, (reason) =>
    metrics.refusals.inc({ reason }),
  );
  const services = { conversations, threads, runs, gateway, assistants, threadDirectory, quotas };
  // The model's text as it is written, read from the worker running the call, not from history,
  // where each piece cost events and a workflow task whether anyone watched or not (decision 0340).
  const live = liveTextSource(client, config, logger);
  // Before the body parser: MCP's transport reads its body and answers bad JSON as JSON-RPC does.
  app.use(mcpRoutes({ services, waitMs: config.api.mcpWaitMs, maxBodyBytes, logger, stopping }));
  // So does A2A's, which answers bad JSON with -32700 (decision 0445).
  app.use(
    a2aRoutes({
      services,
      waitMs: config.api.mcpWaitMs,
      maxBodyBytes,
      tokens: config.api.tokens.length > 0,
      logger,
      stopping,
      live,
    }),
  );
  app.use(jsonBodies(maxBodyBytes));
  // A known path asked with another method answers 405 with `Allow`, from the same operations.
  app.use(methodGate(operations));
  const document = openApiDocument(operations, {
    tokens: config.api.tokens.length > 0,
    networkHosts: config.sandbox.networkHosts.map(formatHostEntry),
  });
  route(app.router, openApiOperation, (_request, response) => {
    response.json(document);
  });
  app.use(healthRoutes(client, config.temporal.namespace, config.taskQueue));
  app.use(metricsRoutes(metrics));
  app.use(systemRoutes(config.sandbox.mode));
  app.use(codec);
  app.use(assistantRoutes(assistants, threadDirectory, config.sandbox.networkHosts));
  // Before threadRoutes: `/threads/search` and `/threads/cleanup` are not thread ids.
  app.use(threadDirectoryRoutes(threads, threadDirectory));
  app.use(approvalRoutes(threads, runs));
  app.use(threadRoutes(threads));
  app.use(threadStateRoutes(threads));
  app.use(streamRoutes(services, stopping, { ...defaultSseTimings, maxMs: config.api.streamMaxMs }, live));
  app.use(activeRunRoutes(client, config.taskQueue));
  app.use(quotaRoutes(quotas));
  app.use(cronRoutes(new Crons(client, config.taskQueue, threads, runs, assistants)));
  app.use(runRoutes(services, stopping));
  app.use(statelessRunRoutes(services, stopping));
  app.use(storeRoutes(store));
  app.use((request, _response, next) => {
    next(new ApiError(404, 'route_not_found', `no route for ${request.method} ${request.path}`));
  });
  app.use(errorMiddleware(logger));
  return app;
}
