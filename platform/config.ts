/**
 * Configuration: the parser of Keel's environment variables, and the one import path for all of
 * it (the schema is in `config-schema.ts`, the shapes in `config-types.ts`, `config-sandbox.ts`,
 * `config-secrets.ts` and `config-store.ts`). `launch/env.ts` reads `process.env` once per process
 * and hands the frozen result down; workflows never see it.
 */
import { KeelError } from '../common/errors';
import { parseLiveWorkers } from './live-workers';
import { parseHostEntry, type HostEntry } from './network-hosts';
import { list, loopbackHosts, schema, wildcardHosts } from './config-schema';
import { parseEncryptionKeys, parseTokens, type EncryptionKeySpec } from './config-secrets';
import { parseStoreIndex, parseStoreUrl, type EmbeddingsConfig } from './config-store';
import type { KeelConfig } from './config-types';
import { telemetryConfig } from './telemetry-config';

export type { KeelEnv } from './config-schema';
export type { SandboxConfig, SandboxLimits } from './config-sandbox';
export { minimumTokenLength, parseEncryptionKeys } from './config-secrets';
export type { ApiToken, EncryptionConfig, EncryptionKeySpec } from './config-secrets';
export { parseStoreIndex, parseStoreUrl } from './config-store';
export type { EmbeddingsConfig, StoreConfig, StoreIndexRule } from './config-store';
export type { KeelConfig, TokenChannelConfig } from './config-types';

const childEnvironmentNames = ['PATH', 'LANG', 'LC_ALL', 'TZ', 'TERM'];
const toolchainEnvironmentNames = [
  ...childEnvironmentNames,
  'HOME',
  'GOPATH',
  'GOROOT',
  'GOPROXY',
  'GOMODCACHE',
  'GOCACHE',
  'GOFLAGS',
  'GOPRIVATE',
  'GONOSUMDB',
  'GOSUMDB',
  'GOTOOLCHAIN',
];

function pick(raw: Record<string, string | undefined>, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.flatMap((name) => (raw[name] === undefined ? [] : [[name, raw[name]]])));
}

export class ConfigError extends KeelError {
  override readonly name = 'ConfigError';
}

/** The model used when a thread names none: `KEEL_MODEL`, else Anthropic with a key, else scripted. */
export const defaultAnthropicModel = 'anthropic:claude-sonnet-4-6';

export function parseConfig(raw: Record<string, string | undefined>, cwd: string): KeelConfig {
  const result = schema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join('.') || 'env'}: ${issue.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const env = result.data;
  const tlsParts = {
    ...(env.TEMPORAL_TLS_CERT === undefined ? {} : { cert: env.TEMPORAL_TLS_CERT }),
    ...(env.TEMPORAL_TLS_KEY === undefined ? {} : { key: env.TEMPORAL_TLS_KEY }),
    ...(env.TEMPORAL_TLS_CA === undefined ? {} : { ca: env.TEMPORAL_TLS_CA }),
    ...(env.TEMPORAL_TLS_SERVER_NAME === undefined ? {} : { serverName: env.TEMPORAL_TLS_SERVER_NAME }),
  };
  const dataDir = env.KEEL_DATA_DIR.startsWith('/') ? env.KEEL_DATA_DIR : `${cwd}/${env.KEEL_DATA_DIR}`;
  const workspacesDir =
    env.KEEL_WORKSPACES_DIR === undefined
      ? `${dataDir}/workspaces`
      : env.KEEL_WORKSPACES_DIR.startsWith('/')
        ? env.KEEL_WORKSPACES_DIR
        : `${cwd}/${env.KEEL_WORKSPACES_DIR}`;
  // `KEEL_MODEL=ollama` alone means the model `OLLAMA_MODEL` names.
  const configured = env.KEEL_MODEL === 'ollama' ? `ollama:${env.OLLAMA_MODEL}` : env.KEEL_MODEL;
  const model = configured ?? (env.ANTHROPIC_API_KEY === undefined ? 'scripted:demo' : defaultAnthropicModel);
  const store = parseStoreUrl(env.KEEL_STORE_URL, dataDir, cwd);
  if (typeof store === 'string') throw new ConfigError(`invalid configuration: ${store}`);
  const storeIndex = parseStoreIndex(env.KEEL_STORE_INDEX);
  if (typeof storeIndex === 'string') throw new ConfigError(`invalid configuration: ${storeIndex}`);
  const embed = env.KEEL_STORE_EMBED === undefined ? undefined : env.KEEL_STORE_EMBED.indexOf(':');
  const embeddings: EmbeddingsConfig | undefined =
    env.KEEL_STORE_EMBED === undefined || embed === undefined
      ? undefined
      : env.KEEL_STORE_EMBED.startsWith('ollama:')
        ? {
            provider: 'ollama',
            model: env.KEEL_STORE_EMBED.slice(embed + 1),
            url: env.OLLAMA_HOST,
            apiKey: undefined,
          }
        : {
            provider: 'openai',
            model: env.KEEL_STORE_EMBED.slice(embed + 1),
            url: env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
            apiKey: env.OPENAI_API_KEY,
          };
  return {
    temporal: {
      address: env.TEMPORAL_ADDRESS,
      namespace: env.TEMPORAL_NAMESPACE,
      apiKey: env.TEMPORAL_API_KEY,
      tls: Object.keys(tlsParts).length === 0 ? undefined : tlsParts,
      cliPath: env.TEMPORAL_CLI_PATH,
      devServerPort: env.KEEL_TEMPORAL_PORT,
      devServerUiPort: env.KEEL_TEMPORAL_UI_PORT,
      devServerStallS: env.KEEL_TEMPORAL_STALL_S,
    },
    cluster: { postgresPort: env.KEEL_POSTGRES_PORT, workerHosts: env.KEEL_CLUSTER_WORKERS },
    taskQueue: env.KEEL_TASK_QUEUE,
    dataDir,
    workspacesDir,
    quota: {
      ...(env.KEEL_QUOTA_DAY_USD === undefined ? {} : { day_usd: env.KEEL_QUOTA_DAY_USD }),
      ...(env.KEEL_QUOTA_MONTH_USD === undefined ? {} : { month_usd: env.KEEL_QUOTA_MONTH_USD }),
      ...(env.KEEL_QUOTA_CONCURRENT_RUNS === undefined
        ? {}
        : { concurrent_runs: env.KEEL_QUOTA_CONCURRENT_RUNS }),
      ...(env.KEEL_QUOTA_LEASE_S === undefined ? {} : { lease_s: env.KEEL_QUOTA_LEASE_S }),
    },
    api: {
      host: env.KEEL_API_HOST,
      port: env.KEEL_API_PORT,
      tokens: parseTokens(env.KEEL_API_TOKENS),
      corsOrigins: list(env.KEEL_API_CORS_ORIGINS),
      allowedHosts: [
        ...new Set([
          ...loopbackHosts,
          ...(wildcardHosts.has(env.KEEL_API_HOST) ? [] : [env.KEEL_API_HOST]),
          ...list(env.KEEL_API_ALLOWED_HOSTS),
        ]),
      ],
      intakeWaitMs: env.KEEL_INTAKE_WAIT_MS,
      readTimeoutMs: env.KEEL_READ_TIMEOUT_MS,
      requestTimeouts: {
        headersMs: env.KEEL_API_HEADERS_TIMEOUT_MS,
        requestMs: env.KEEL_API_REQUEST_TIMEOUT_MS,
      },
      streamMaxMs: env.KEEL_STREAM_MAX_S === 0 ? undefined : env.KEEL_STREAM_MAX_S * 1_000,
      mcpWaitMs: env.KEEL_MCP_WAIT_S * 1_000,
      localModelCalls: env.KEEL_LOCAL_MODEL_CALLS === '1',
      waitValuesChars: env.KEEL_WAIT_VALUES_CHARS,
    },
    model: { default: model, explicit: env.KEEL_MODEL !== undefined },
    providers: {
      anthropicApiKey: env.ANTHROPIC_API_KEY,
      anthropicBaseUrl: env.ANTHROPIC_BASE_URL,
      openaiApiKey: env.OPENAI_API_KEY,
      openaiBaseUrl: env.OPENAI_BASE_URL,
      ollamaHost: env.OLLAMA_HOST,
      ollamaModel: env.OLLAMA_MODEL,
      stallTimeoutS: env.KEEL_MODEL_STALL_TIMEOUT_S,
      toollessModels: list(env.KEEL_TOOLLESS_MODELS),
    },
    defaults: {
      approval: env.KEEL_APPROVAL,
      approvalTimeoutS: env.KEEL_APPROVAL_TIMEOUT_S,
      maxTokens: env.KEEL_MAX_TOKENS,
      maxCostUsd: env.KEEL_MAX_COST_USD,
      maxSteps: env.KEEL_MAX_STEPS,
    },
    shutdownGraceS: env.KEEL_SHUTDOWN_GRACE,
    heapReportFile: env.KEEL_HEAP_REPORT,
    pricesFile: env.KEEL_PRICES_FILE,
    webhookSecret: env.KEEL_WEBHOOK_SECRET,
    webhookAllowHosts: list(env.KEEL_WEBHOOK_ALLOW_HOSTS).map((host) => host.toLowerCase()),
    sandbox: {
      mode: env.KEEL_SANDBOX,
      network: env.KEEL_SANDBOX_NETWORK,
      networkHosts: list(env.KEEL_SANDBOX_NETWORK_HOSTS).map((entry) => parseHostEntry(entry) as HostEntry),
      uid: env.KEEL_SANDBOX_UID,
      uidRange: { base: env.KEEL_SANDBOX_UID_BASE, count: env.KEEL_SANDBOX_UID_COUNT },
      limits: {
        wallSeconds: env.KEEL_SANDBOX_TIMEOUT_S,
        cpuSeconds: env.KEEL_SANDBOX_CPU_S,
        memoryMb: env.KEEL_SANDBOX_MEMORY_MB,
        processes: env.KEEL_SANDBOX_PROCESSES,
        fileMb: env.KEEL_SANDBOX_FILE_MB,
        tmpMb: env.KEEL_SANDBOX_TMP_MB,
        workspaceMb: env.KEEL_SANDBOX_WORKSPACE_MB,
        diskReserveMb: env.KEEL_SANDBOX_DISK_RESERVE_MB,
        inodeReserve: env.KEEL_SANDBOX_INODE_RESERVE,
        workspaceInodes: env.KEEL_SANDBOX_WORKSPACE_INODES,
      },
    },
    encryption: {
      keys:
        env.KEEL_ENCRYPTION_KEYS === undefined
          ? undefined
          : (parseEncryptionKeys(env.KEEL_ENCRYPTION_KEYS) as EncryptionKeySpec[]),
      keyFile: `${dataDir}/encryption-keys`,
      mayGenerate: env.TEMPORAL_ADDRESS === undefined,
      corsOrigins:
        env.KEEL_CODEC_CORS_ORIGINS === undefined
          ? [`http://127.0.0.1:${env.KEEL_TEMPORAL_UI_PORT}`, `http://localhost:${env.KEEL_TEMPORAL_UI_PORT}`]
          : list(env.KEEL_CODEC_CORS_ORIGINS),
      uiToken: env.KEEL_CODEC_UI_TOKEN,
    },
    extensionsFile: env.KEEL_EXTENSIONS_FILE,
    workflowBundle: env.KEEL_WORKFLOW_BUNDLE,
    store,
    storeIndex,
    embeddings,
    tokens: {
      channel: env.KEEL_TOKEN_CHANNEL,
      host: env.KEEL_WORKER_LIVE_HOST,
      port: env.KEEL_WORKER_LIVE_PORT,
      advertisedUrl: env.KEEL_WORKER_LIVE_URL,
      liveWorkers: parseLiveWorkers(env.KEEL_API_LIVE_WORKERS),
    },
    cacheDir: `${raw.XDG_CACHE_HOME ?? `${raw.HOME ?? cwd}/.cache`}/keel`,
    childEnvironment: pick(raw, childEnvironmentNames),
    toolchainEnvironment: pick(raw, toolchainEnvironmentNames),
    log: { level: env.KEEL_LOG_LEVEL, format: env.KEEL_LOG_FORMAT },
    telemetry: telemetryConfig(env),
  };
}

/** Where the processes reach Temporal: the configured cluster, or the dev server `keel up` runs. */
export function temporalAddress(config: KeelConfig): string {
  return config.temporal.address ?? `127.0.0.1:${config.temporal.devServerPort}`;
}
