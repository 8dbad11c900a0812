/**
 * Configuration: the schema of Keel's environment variables and its parser. `launch/env.ts` reads
 * `process.env` once per process and hands the frozen result down; workflows never see it.
 */
import { z } from 'zod';
import type { QuotaLimits } from '../common/quota';
import { parseModelSpec } from '../common/model-spec';
import {
  loopbackLiveWorkers,
  parseLiveWorkerEntry,
  parseLiveWorkers,
  type LiveWorkerEntry,
} from './live-workers';
import { parseHostEntry, type HostEntry } from './network-hosts';
import {
  telemetryConfig,
  telemetryEnvShape,
  telemetryProblem,
  type TelemetryConfig,
} from './telemetry-config';
import { KeelError } from '../common/errors';

const loopbackHosts = new Set(['127.0.0.1', 'localhost', '::1']);
/** Addresses that listen on every interface: they name no host a request could give. */
const wildcardHosts = new Set(['0.0.0.0', '::', '[::]']);
/** Shorter tokens are refused at start: a guessable token is no authentication. */
export const minimumTokenLength = 16;

const seconds = (fallback: number) => z.coerce.number().positive().default(fallback);
const optionalNumber = z.coerce.number().positive().optional();
const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()));

const schema = z
  .object({
    TEMPORAL_ADDRESS: optionalString,
    TEMPORAL_NAMESPACE: z.string().default('default'),
    TEMPORAL_API_KEY: optionalString,
    TEMPORAL_TLS_CERT: optionalString,
    TEMPORAL_TLS_KEY: optionalString,
    TEMPORAL_TLS_CA: optionalString,
    TEMPORAL_TLS_SERVER_NAME: optionalString,
    TEMPORAL_CLI_PATH: optionalString,
    KEEL_TEMPORAL_PORT: z.coerce.number().int().positive().default(7233),
    KEEL_TEMPORAL_UI_PORT: z.coerce.number().int().positive().default(8233),
    KEEL_TEMPORAL_STALL_S: z.coerce.number().int().min(3).max(3600).default(45),
    KEEL_POSTGRES_PORT: z.coerce.number().int().positive().default(5433),
    KEEL_CLUSTER_WORKERS: z.coerce.number().int().min(1).max(16).default(2),
    KEEL_TASK_QUEUE: z.string().min(1).default('keel'),
    KEEL_DATA_DIR: z.string().default('.keel'),
    KEEL_WORKSPACES_DIR: optionalString,
    KEEL_API_HOST: z.string().default('127.0.0.1'),
    KEEL_API_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
    KEEL_API_TOKENS: optionalString,
    KEEL_API_CORS_ORIGINS: optionalString,
    KEEL_API_ALLOWED_HOSTS: optionalString,
    KEEL_INTAKE_WAIT_MS: z.coerce.number().int().min(1).max(60_000).default(500),
    KEEL_READ_TIMEOUT_MS: z.coerce.number().int().min(1).max(120_000).default(3_000),
    KEEL_API_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(5_000),
    KEEL_API_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(3_600_000).default(10_000),
    KEEL_API_LIVE_WORKERS: z.string().default(loopbackLiveWorkers),
    KEEL_STREAM_MAX_S: z.coerce.number().min(0).max(86_400).default(0),
    KEEL_MCP_WAIT_S: z.coerce.number().min(1).max(3_600).default(300),
    KEEL_LOCAL_MODEL_CALLS: z.enum(['0', '1']).default('0'),
    KEEL_TOKEN_CHANNEL: z.enum(['live', 'history']).default('live'),
    KEEL_WORKER_LIVE_HOST: z.string().min(1).default('127.0.0.1'),
    KEEL_WORKER_LIVE_PORT: z.coerce.number().int().min(0).max(65535).default(0),
    KEEL_WORKER_LIVE_URL: optionalString,
    KEEL_WAIT_VALUES_CHARS: z.coerce
      .number()
      .int()
      .min(0)
      .max(128 * 1024)
      .default(16 * 1024),
    KEEL_MODEL: optionalString,
    ANTHROPIC_API_KEY: optionalString,
    ANTHROPIC_BASE_URL: optionalString,
    OPENAI_API_KEY: optionalString,
    OPENAI_BASE_URL: optionalString,
    OLLAMA_HOST: z.string().default('http://localhost:11434'),
    OLLAMA_MODEL: optionalString,
    KEEL_MODEL_STALL_TIMEOUT_S: seconds(90),
    KEEL_TOOLLESS_MODELS: optionalString,
    KEEL_MAX_TOKENS: optionalNumber,
    KEEL_MAX_COST_USD: optionalNumber,
    KEEL_QUOTA_DAY_USD: optionalNumber,
    KEEL_QUOTA_MONTH_USD: optionalNumber,
    KEEL_QUOTA_CONCURRENT_RUNS: z.coerce.number().int().positive().optional(),
    KEEL_QUOTA_LEASE_S: z.coerce.number().int().positive().optional(),
    KEEL_APPROVAL: z.enum(['auto', 'require']).default('auto'),
    KEEL_APPROVAL_TIMEOUT_S: seconds(300),
    KEEL_MAX_STEPS: z.coerce.number().int().positive().default(50),
    KEEL_SHUTDOWN_GRACE: seconds(30),
    KEEL_HEAP_REPORT: optionalString,
    KEEL_PRICES_FILE: optionalString,
    KEEL_WEBHOOK_SECRET: optionalString,
    KEEL_WEBHOOK_ALLOW_HOSTS: optionalString,
    KEEL_ENCRYPTION_KEYS: optionalString,
    KEEL_CODEC_CORS_ORIGINS: optionalString,
    KEEL_CODEC_UI_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
    KEEL_SANDBOX: z.enum(['on', 'off']).default('on'),
    KEEL_SANDBOX_NETWORK: z.enum(['off', 'on']).default('off'),
    KEEL_SANDBOX_NETWORK_HOSTS: optionalString,
    KEEL_SANDBOX_UID: z.coerce.number().int().positive().default(65534),
    KEEL_SANDBOX_UID_BASE: z.coerce
      .number()
      .int()
      .min(1000)
      .max(2 ** 31 - 1)
      .default(100_000),
    KEEL_SANDBOX_UID_COUNT: z.coerce.number().int().positive().default(65_536),
    KEEL_SANDBOX_TIMEOUT_S: z.coerce.number().int().positive().max(600).default(120),
    KEEL_SANDBOX_CPU_S: z.coerce.number().int().positive().default(600),
    KEEL_SANDBOX_MEMORY_MB: z.coerce.number().int().positive().default(4096),
    KEEL_SANDBOX_PROCESSES: z.coerce.number().int().positive().default(256),
    KEEL_SANDBOX_FILE_MB: z.coerce.number().int().positive().default(1024),
    KEEL_SANDBOX_TMP_MB: z.coerce.number().int().positive().default(512),
    KEEL_SANDBOX_WORKSPACE_MB: z.coerce.number().int().positive().default(10_240),
    KEEL_SANDBOX_DISK_RESERVE_MB: z.coerce.number().int().min(0).default(1_024),
    KEEL_SANDBOX_INODE_RESERVE: z.coerce.number().int().min(0).default(100_000),
    KEEL_SANDBOX_WORKSPACE_INODES: z.coerce.number().int().positive().default(1_000_000),
    KEEL_EXTENSIONS_FILE: optionalString,
    KEEL_WORKFLOW_BUNDLE: optionalString,
    KEEL_STORE_URL: optionalString,
    KEEL_STORE_EMBED: z
      .string()
      .regex(/^(ollama|openai):.+$/, 'give ollama:<model> or openai:<model>')
      .optional(),
    KEEL_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error']).default('info'),
    KEEL_LOG_FORMAT: z.enum(['json', 'pretty']).default('json'),
    ...telemetryEnvShape,
  })
  .superRefine((env, context) => {
    const telemetry = telemetryProblem(env);
    if (telemetry !== undefined) context.addIssue({ code: 'custom', path: ['OTEL'], message: telemetry });
    if (!loopbackHosts.has(env.KEEL_API_HOST) && env.KEEL_API_TOKENS === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['KEEL_API_HOST'],
        message: `binding the API to ${env.KEEL_API_HOST} exposes it beyond this machine; set KEEL_API_TOKENS (owner:token,…) first`,
      });
    }
    for (const [name, what] of [
      ['KEEL_API_CORS_ORIGINS', 'lets every web page call the API'],
      ['KEEL_API_ALLOWED_HOSTS', 'lets any site that points its name at this machine call the API'],
    ] as const)
      if (list(env[name]).includes('*') && env.KEEL_API_TOKENS === undefined)
        context.addIssue({
          code: 'custom',
          path: [name],
          message: `* ${what}, and without KEEL_API_TOKENS it would read and change every thread; name them, or set KEEL_API_TOKENS first`,
        });
    if (env.KEEL_API_TOKENS !== undefined) {
      const problem = tokenProblem(env.KEEL_API_TOKENS);
      if (problem !== undefined)
        context.addIssue({ code: 'custom', path: ['KEEL_API_TOKENS'], message: problem });
    }
    if (env.KEEL_API_REQUEST_TIMEOUT_MS < env.KEEL_API_HEADERS_TIMEOUT_MS)
      context.addIssue({
        code: 'custom',
        path: ['KEEL_API_REQUEST_TIMEOUT_MS'],
        message: `the whole request (${env.KEEL_API_REQUEST_TIMEOUT_MS} ms) cannot take less than its headers (KEEL_API_HEADERS_TIMEOUT_MS, ${env.KEEL_API_HEADERS_TIMEOUT_MS} ms)`,
      });
    for (const entry of list(env.KEEL_API_LIVE_WORKERS)) {
      const parsed = parseLiveWorkerEntry(entry);
      if (typeof parsed === 'string')
        context.addIssue({ code: 'custom', path: ['KEEL_API_LIVE_WORKERS'], message: parsed });
    }
    for (const entry of list(env.KEEL_SANDBOX_NETWORK_HOSTS)) {
      const parsed = parseHostEntry(entry);
      if (typeof parsed === 'string')
        context.addIssue({ code: 'custom', path: ['KEEL_SANDBOX_NETWORK_HOSTS'], message: parsed });
    }
    if (env.KEEL_ENCRYPTION_KEYS !== undefined) {
      const keys = parseEncryptionKeys(env.KEEL_ENCRYPTION_KEYS);
      if (typeof keys === 'string')
        context.addIssue({ code: 'custom', path: ['KEEL_ENCRYPTION_KEYS'], message: keys });
    }
    if (env.KEEL_MODEL === 'ollama' && env.OLLAMA_MODEL === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['KEEL_MODEL'],
        message: 'KEEL_MODEL=ollama needs OLLAMA_MODEL',
      });
    } else if (env.KEEL_MODEL !== undefined && env.KEEL_MODEL !== 'ollama') {
      const spec = parseModelSpec(env.KEEL_MODEL);
      if (typeof spec === 'string') context.addIssue({ code: 'custom', path: ['KEEL_MODEL'], message: spec });
    }
  });

export type KeelEnv = z.infer<typeof schema>;

/**
 * Limits on every sandboxed command (bash), each enforced by the kernel: `ulimit` inside the
 * sandbox, and a size-capped tmpfs for `/tmp`.
 */
export interface SandboxLimits {
  /** Wall-clock seconds before a command that names no timeout is killed (`KEEL_SANDBOX_TIMEOUT_S`, at most 600). @default 120 */
  wallSeconds: number;
  /** CPU seconds per process (`KEEL_SANDBOX_CPU_S`). @default 600 */
  cpuSeconds: number;
  /** Address space per process in MiB (`KEEL_SANDBOX_MEMORY_MB`). @default 4096 */
  memoryMb: number;
  /** Processes alive at once inside one call's sandbox (`KEEL_SANDBOX_PROCESSES`). @default 256 */
  processes: number;
  /** Largest file a command may write, in MiB (`KEEL_SANDBOX_FILE_MB`). @default 1024 */
  fileMb: number;
  /** Size of the private `/tmp`, in MiB (`KEEL_SANDBOX_TMP_MB`). @default 512 */
  tmpMb: number;
  /**
   * Disk a thread's workspace may use, in MiB (`KEEL_SANDBOX_WORKSPACE_MB`): a command that takes
   * it past this is stopped, a file tool's write that would is refused, so one thread cannot fill
   * the filesystem Temporal's database and the other threads write to (decision 0327). @default 10240
   */
  workspaceMb: number;
  /**
   * Free space, in MiB, kept on the workspaces' filesystem for everyone else (Temporal, other
   * threads) (`KEEL_SANDBOX_DISK_RESERVE_MB`): a command that brings it lower is stopped, a
   * write that would is refused. @default 1024
   */
  diskReserveMb: number;
  /**
   * Free inodes (files, directories, links) kept on the workspaces' filesystem for everyone else
   * (`KEEL_SANDBOX_INODE_RESERVE`): a command that creates files past it is stopped, a file tool's
   * write is refused, as for `diskReserveMb`. Not checked on filesystems that report no inode
   * count (btrfs). @default 100000
   */
  inodeReserve: number;
  /**
   * Inodes (files, directories, links) a thread's workspace may hold
   * (`KEEL_SANDBOX_WORKSPACE_INODES`): a command that creates more is stopped, a file tool's write
   * is refused, so one thread cannot take every inode and leave the others unable to create a
   * file (decision 0500). Walked only when the filesystem's count grows near it; not checked
   * on filesystems that report no inode count (btrfs). @default 1000000
   */
  workspaceInodes: number;
}

export interface SandboxConfig {
  /** `on` (bubblewrap, the default) or `off` (unconfined; the operator chose it and is warned). */
  mode: 'on' | 'off';
  /** Whether sandboxed commands reach the network at all (`KEEL_SANDBOX_NETWORK`). @default 'off' */
  network: 'off' | 'on';
  /**
   * Hosts a thread may ask its commands to reach through Keel's proxy (`network_hosts`), while
   * `network` is `off` (`KEEL_SANDBOX_NETWORK_HOSTS`: names, `*.domain`, `host:port`, `*`), in
   * canonical form. An entry without a port allows 80 and 443. A loopback, private, link-local or
   * metadata host is reached only when an entry names it exactly with its port; never through a
   * wildcard (docs/decisions/0316).
   * @default [] (no thread may ask)
   */
  networkHosts: HostEntry[];
  /**
   * The uid (and gid) every thread's commands ran as under a root worker before each thread had
   * its own (`KEEL_SANDBOX_UID`): a workspace still owned by it is handed to the thread's uid, so
   * old threads do not stay on one uid and starve each other's process limit (decision 0325).
   * @default 65534
   */
  uid: number;
  /**
   * The uids threads' commands run as under a root worker: each workspace has its own, from a
   * hash of its name into `[base, base + count)` (`KEEL_SANDBOX_UID_BASE`, `KEEL_SANDBOX_UID_COUNT`;
   * decision 0325). The kernel counts the process limit per uid, so on one shared uid a fork
   * flood in one thread stalls every other thread's commands; a hash needs no coordination
   * between worker hosts. Keep the range clear of the host's users and of subordinate-uid ranges.
   * @default { base: 100000, count: 65536 }
   */
  uidRange: { base: number; count: number };
  limits: SandboxLimits;
}

/** An API caller: the owner its token stands for. */
export interface ApiToken {
  owner: string;
  token: string;
}

/** One key of `KEEL_ENCRYPTION_KEYS`: the id stored beside each payload it encrypts, and the key. */
export interface EncryptionKeySpec {
  id: string;
  /** 32 bytes, base64 (44 characters) or hex (64). */
  secret: string;
}

export interface EncryptionConfig {
  /**
   * `KEEL_ENCRYPTION_KEYS` (`id:key,…`): the first encrypts, all decrypt. Unset: the key file in
   * the data dir (`keyFile`), generated once on the embedded default.
   */
  keys: EncryptionKeySpec[] | undefined;
  /** `<data dir>/encryption-keys`, mode 0600, same format, one key per line. */
  keyFile: string;
  /** Whether a missing key file may be generated: only when Keel runs its own dev server. */
  mayGenerate: boolean;
  /**
   * Browser origins allowed to call `/codec/*` (the Temporal Web UI): `KEEL_CODEC_CORS_ORIGINS`,
   * comma-separated. @default the dev server's UI, `http://127.0.0.1:<ui port>` and `http://localhost:<ui port>`
   */
  corsOrigins: string[];
  /**
   * The secret in the Web UI's codec endpoint (`/codec/ui/<token>`), which works without an API
   * token: the Temporal UI cannot send one (`KEEL_CODEC_UI_TOKEN`; `keel up` makes one when the
   * API has tokens). Unset: no such endpoint.
   */
  uiToken: string | undefined;
}

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

/**
 * The Store API's database (`KEEL_STORE_URL`): SQLite in a file, or PostgreSQL by URL.
 * @default SQLite at `<data dir>/store.db`
 */
export type StoreConfig = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

/** `KEEL_STORE_URL` read: `postgres://…` (or `postgresql://…`), `sqlite:<path>`, or unset. */
export function parseStoreUrl(raw: string | undefined, dataDir: string, cwd: string): StoreConfig | string {
  if (raw === undefined) return { kind: 'sqlite', file: `${dataDir}/store.db` };
  if (/^postgres(ql)?:\/\//i.test(raw)) return { kind: 'postgres', url: raw };
  if (raw.startsWith('sqlite:') && raw.length > 'sqlite:'.length) {
    const file = raw.slice('sqlite:'.length);
    return { kind: 'sqlite', file: file.startsWith('/') ? file : `${cwd}/${file}` };
  }
  return 'KEEL_STORE_URL: give postgres://user:password@host:port/database or sqlite:<path>';
}

/**
 * The Store's embeddings provider (`KEEL_STORE_EMBED=ollama:<model>` or `openai:<model>`, at
 * `OLLAMA_HOST` or `OPENAI_BASE_URL` with `OPENAI_API_KEY`): with one, a search's `query` ranks by
 * meaning (decision 0451). @default none: text search only
 */
export interface EmbeddingsConfig {
  provider: 'ollama' | 'openai';
  model: string;
  /** Ollama's host, or the OpenAI-compatible base URL (ending in `/v1`). */
  url: string;
  apiKey: string | undefined;
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

function parseTokens(raw: string | undefined): ApiToken[] {
  if (raw === undefined) return [];
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const separator = entry.indexOf(':');
      return separator === -1
        ? { owner: 'default', token: entry }
        : { owner: entry.slice(0, separator).trim(), token: entry.slice(separator + 1).trim() };
    });
}

/** Why a token list must not start the API, or undefined: auth never fails open on a typo. */
function tokenProblem(raw: string): string | undefined {
  const tokens = parseTokens(raw);
  if (tokens.length === 0) return 'names no token; use owner:token,… (or unset it on a loopback-only API)';
  for (const [index, { owner, token }] of tokens.entries()) {
    const which = `entry ${index + 1}${owner === '' ? '' : ` (owner "${owner}")`}`;
    if (owner === '') return `${which} has no owner before ":"`;
    // Temporal's SQL visibility (PostgreSQL, as under `keel up --cluster`) reads a `?` in a query's
    // value as a parameter: the owner's searches would answer 503.
    if (owner.includes('?')) return `${which} has a "?" in its owner name; owner names cannot hold one`;
    if (token.length < minimumTokenLength)
      return `${which} has a token of ${token.length} characters; use at least ${minimumTokenLength} (e.g. openssl rand -hex 24)`;
  }
  return undefined;
}

const keyIdPattern = /^[A-Za-z0-9._-]{1,64}$/;
const base64KeyPattern = /^[A-Za-z0-9+/]{43}=$/;
const hexKeyPattern = /^[0-9a-fA-F]{64}$/;

/**
 * Parses a key list (`id:key`, separated by commas or new lines; each key 32 bytes as base64 or
 * hex), or says what is wrong with it, never echoing a key.
 */
export function parseEncryptionKeys(raw: string): EncryptionKeySpec[] | string {
  const entries = raw
    .split(/[,\n]/)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '' && !entry.startsWith('#'));
  if (entries.length === 0)
    return 'names no key; use id:key,… with 32-byte keys (e.g. k1:$(openssl rand -base64 32))';
  const keys: EncryptionKeySpec[] = [];
  for (const [index, entry] of entries.entries()) {
    const separator = entry.indexOf(':');
    const id = separator === -1 ? '' : entry.slice(0, separator).trim();
    const secret = separator === -1 ? entry : entry.slice(separator + 1).trim();
    const which = `entry ${index + 1}${id === '' ? '' : ` (key "${id}")`}`;
    if (!keyIdPattern.test(id))
      return `${which} needs an id before ":" (letters, digits, . _ -, at most 64), as id:key`;
    if (!base64KeyPattern.test(secret) && !hexKeyPattern.test(secret))
      return `${which} is not a 32-byte key (44 characters of base64 or 64 of hex; e.g. openssl rand -base64 32)`;
    if (keys.some((key) => key.id === id)) return `${which} repeats the id "${id}"`;
    keys.push({ id, secret });
  }
  return keys;
}

function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

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
