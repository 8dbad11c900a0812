/** `KeelConfig`: the configuration every process is handed, parsed once from the environment. */
import type { QuotaLimits } from '../common/quota';
import type { LiveWorkerEntry } from './live-workers';
import type { SandboxConfig } from './config-sandbox';
import type { ApiToken, EncryptionConfig } from './config-secrets';
import type { EmbeddingsConfig, StoreConfig, StoreIndexRule } from './config-store';
import type { TelemetryConfig } from './telemetry-config';

export interface TokenChannelConfig {
  /**
   * `live`: the worker serves the text of its model calls over HTTP and the API reads it there,
   * nothing of it in Temporal's history; `history`: the worker publishes it into the workflow's
   * log every 100 ms, for deployments where the API cannot reach the workers
   * (`KEEL_TOKEN_CHANNEL`). @default 'live'
   */
  channel: 'live' | 'history';
  /** The address the worker's live text endpoint binds (`KEEL_WORKER_LIVE_HOST`). @default '127.0.0.1' */
  host: string;
  /** Its port (`KEEL_WORKER_LIVE_PORT`), 0 for any free one. @default 0 */
  port: number;
  /**
   * The URL the APIs reach it at, when not `http://<host>:<port>` (`KEEL_WORKER_LIVE_URL`): a
   * worker in a cluster binds a routable address and names it here.
   */
  advertisedUrl: string | undefined;
  /**
   * Where an API reads live text from: the worker URLs these entries allow, nothing else
   * (`KEEL_API_LIVE_WORKERS`, comma-separated hosts, `host:port`s, CIDR blocks or `*`; decision
   * 0390). A worker elsewhere streams its text whole with the answer. @default loopback
   */
  liveWorkers: LiveWorkerEntry[];
}

export interface KeelConfig {
  temporal: {
    /** Unset: `keel up` starts a dev server on `devServerPort`. */
    address: string | undefined;
    namespace: string;
    apiKey: string | undefined;
    tls: { cert?: string; key?: string; ca?: string; serverName?: string } | undefined;
    cliPath: string | undefined;
    devServerPort: number;
    devServerUiPort: number;
    /**
     * How long `keel up`'s dev server may go without answering before it is killed and started
     * again (`KEEL_TEMPORAL_STALL_S`, decision 0417): its one SQLite connection can stay
     * interrupted for good while the process lives, failing every query after it. @default 45
     */
    devServerStallS: number;
  };
  /** What `keel up --cluster` starts (decision 0140); the frontend listens on `devServerPort`. */
  cluster: {
    /** The private PostgreSQL's loopback port (`KEEL_POSTGRES_PORT`). @default 5433 */
    postgresPort: number;
    /** Keel worker hosts, each with its own data dir (`KEEL_CLUSTER_WORKERS`). @default 2 */
    workerHosts: number;
  };
  taskQueue: string;
  dataDir: string;
  /**
   * Where threads' workspaces live, one directory per thread (`KEEL_WORKSPACES_DIR`). Worker hosts
   * that share it (a shared volume) let a thread's files follow it from host to host (decision 0170).
   * @default `<data dir>/workspaces`
   */
  workspacesDir: string;
  /**
   * Each owner's quota (decision 0440): dollars per UTC day (`KEEL_QUOTA_DAY_USD`) and month
   * (`KEEL_QUOTA_MONTH_USD`), runs under way at once (`KEEL_QUOTA_CONCURRENT_RUNS`), and how long a
   * run's reservation that is never settled is held (`KEEL_QUOTA_LEASE_S`, @default 21600). Unset:
   * no quota. The API enforces it.
   */
  quota: QuotaLimits;
  api: {
    host: string;
    port: number;
    tokens: ApiToken[];
    /**
     * Browser origins allowed to call the API (`KEEL_API_CORS_ORIGINS`, comma-separated; `*` for
     * any, only with tokens). The web chat is same-origin and needs none (decision 0312). @default []
     */
    corsOrigins: string[];
    /**
     * The names a request's `Host` may give (any port): the loopback names, `host` unless it is
     * a wildcard address, and `KEEL_API_ALLOWED_HOSTS` (comma-separated; `*` for any, only with
     * tokens). This stops DNS rebinding, where a page re-resolves its own name to loopback and
     * reads the API as same-origin; IP literals always pass, since only a name can be rebound
     * (decision 0311).
     */
    allowedHosts: string[];
    /**
     * How long the door waits for the thread's own answer to a message, decision or cancel
     * (`KEEL_INTAKE_WAIT_MS`); after a third of it (250 ms at most) the input is already in the
     * thread's history by signal, and past it the caller hears `queued`. @default 500
     */
    intakeWaitMs: number;
    /** How long a read (a query) may wait for the thread's worker before 503 (`KEEL_READ_TIMEOUT_MS`). @default 3000 */
    readTimeoutMs: number;
    /**
     * How long a client may take to send a request's headers (`KEEL_API_HEADERS_TIMEOUT_MS`,
     * default 5000) and the whole request (`KEEL_API_REQUEST_TIMEOUT_MS`, default 10000) before
     * 408, so a client sending a byte at a time cannot hold a connection; responses, however long
     * (streams, `runs/wait`), are not limited by them: Node stops these timers once the request is
     * read (decision 0313).
     */
    requestTimeouts: { headersMs: number; requestMs: number };
    /**
     * Longest an SSE stream stays open, in ms (`KEEL_STREAM_MAX_S`, 0 for no bound); then it is
     * closed without `end` and the client resumes with `Last-Event-ID`. @default undefined (none)
     */
    streamMaxMs?: number | undefined;
    /**
     * How long an MCP `tools/call` that is not a task waits for the run's answer, and `tasks/result`
     * for the run's end, in ms (`KEEL_MCP_WAIT_S`; decision 0430). Past it the call answers what
     * the run waits on and the run goes on, as `runs/wait` does, so a long run does not hold the
     * client's call open without end. @default 300000
     */
    mcpWaitMs: number;
    /**
     * Whether a run waited for 60 s or more makes its model calls as local activities
     * (`KEEL_LOCAL_MODEL_CALLS=1`; decision 0200): 8 history events for a plain turn, 15 for a tool
     * turn. Off by default: at 100 conversations at once it failed turns (BENCHMARKS.md). @default false
     */
    localModelCalls: boolean;
    /**
     * Characters of JSON a waited run's update may bring back of its final values (the new
     * messages, pending approvals), so no query follows it (`KEEL_WAIT_VALUES_CHARS`, 0: never;
     * decision 0255). They are written to history with the update's completion. @default 16384
     */
    waitValuesChars: number;
  };
  model: { default: string; explicit: boolean };
  providers: {
    anthropicApiKey: string | undefined;
    anthropicBaseUrl: string | undefined;
    openaiApiKey: string | undefined;
    openaiBaseUrl: string | undefined;
    ollamaHost: string;
    ollamaModel: string | undefined;
    /** Silence on a model stream after which the call is abandoned and retried (`KEEL_MODEL_STALL_TIMEOUT_S`). @default 90 */
    stallTimeoutS: number;
    /** `provider:model` specs whose tools go through the prompt (`KEEL_TOOLLESS_MODELS`, comma-separated). */
    toollessModels: string[];
  };
  defaults: {
    approval: 'auto' | 'require';
    approvalTimeoutS: number;
    maxTokens: number | undefined;
    maxCostUsd: number | undefined;
    maxSteps: number;
  };
  shutdownGraceS: number;
  /** The memory benchmark's heap report file (worker/heap-probe.ts); unset, the worker has no probe. */
  heapReportFile: string | undefined;
  pricesFile: string | undefined;
  /** Signs run webhooks (Standard Webhooks, `whsec_…` base64); unset sends them unsigned. */
  webhookSecret: string | undefined;
  /**
   * Hosts (names or IP literals) webhooks may reach even though they are loopback, private,
   * link-local or metadata addresses (`KEEL_WEBHOOK_ALLOW_HOSTS`, comma-separated). @default []
   */
  webhookAllowHosts: string[];
  sandbox: SandboxConfig;
  /** Encryption at rest: the payload codec's keys (decision 0081). */
  encryption: EncryptionConfig;
  extensionsFile: string | undefined;
  workflowBundle: string | undefined;
  /** Where the Store API keeps its items (decision 0435). */
  store: StoreConfig;
  /** The fields an item put without `index` is indexed by, per namespace prefix (`KEEL_STORE_INDEX`). */
  storeIndex: StoreIndexRule[];
  /** The Store's embeddings provider, when one is configured (decision 0451). */
  embeddings: EmbeddingsConfig | undefined;
  /** How a model call's text reaches the streams while it is generated (decision 0340). */
  tokens: TokenChannelConfig;
  /** Where Keel caches what it builds once (the Temporal CLI): `$XDG_CACHE_HOME/keel` or `~/.cache/keel`. */
  cacheDir: string;
  /** What commands run by tools inherit: PATH and locale, none of the worker's secrets. */
  childEnvironment: Record<string, string>;
  /** What `go install` needs to build the Temporal CLI: PATH, HOME and Go's own settings. */
  toolchainEnvironment: Record<string, string>;
  log: { level: 'debug' | 'info' | 'warn' | 'error'; format: 'json' | 'pretty' };
  /** Metrics and traces (common/telemetry-config.ts). */
  telemetry: TelemetryConfig;
}
