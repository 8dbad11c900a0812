/** The schema of Keel's environment variables: each one's type and default, and the checks across them. */
import { z } from 'zod';
import { parseModelSpec } from '../common/model-spec';
import { loopbackLiveWorkers, parseLiveWorkerEntry } from './live-workers';
import { parseHostEntry } from './network-hosts';
import { parseEncryptionKeys, tokenProblem } from './config-secrets';
import { telemetryEnvShape, telemetryProblem } from './telemetry-config';

export const loopbackHosts = new Set(['127.0.0.1', 'localhost', '::1']);
/** Addresses that listen on every interface: they name no host a request could give. */
export const wildcardHosts = new Set(['0.0.0.0', '::', '[::]']);

const seconds = (fallback: number) => z.coerce.number().positive().default(fallback);
const optionalNumber = z.coerce.number().positive().optional();
const optionalString = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()));

export const schema = z
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
    KEEL_STORE_INDEX: optionalString,
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

export function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}
