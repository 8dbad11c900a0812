/**
 * Response schemas: what the API answers, for `/openapi.json` and the fuzzer's checks. The ones
 * that mirror a TypeScript type are tied to it at compile time (`describing<T>()`): a field added
 * to `Thread` or `Run` and not here fails `tsc`.
 */
import { z } from 'zod';
import type { PendingApproval } from '../common/approvals';
import type { Run } from '../common/run';
import type { ThreadSummary, Thread } from '../common/thread';
import type { Usage } from '../common/usage';
import type { Assistant } from '../common/assistants';
import type { ThreadListing } from './threads/thread-directory';

/** True when `S` has exactly `T`'s keys and every `T` is a valid `S`. */
type Describes<S extends z.ZodType, T> = [keyof T] extends [keyof z.output<S>]
  ? [keyof z.output<S>] extends [keyof T]
    ? T extends z.output<S>
      ? true
      : false
    : false
  : false;

/** `describing<T>()(schema)` compiles only when `schema` describes `T` (see `Describes`). */
const describing =
  <T>() =>
  <S extends z.ZodType>(schema: S & (Describes<S, T> extends true ? unknown : never)): S =>
    schema;

const timestamp = z.string().describe('ISO 8601');
const record = z.record(z.string(), z.unknown());

/** The one error shape (api/errors.ts); `/readyz` adds its `checks`. */
export const errorBody = z.looseObject({
  error: z.object({
    type: z.string(),
    code: z.string(),
    message: z.string(),
    param: z.string().optional(),
  }),
  detail: z.string(),
});

export const usage = describing<Usage>()(
  z.object({
    input_tokens: z.number(),
    output_tokens: z.number(),
    cache_creation_input_tokens: z.number(),
    cache_read_input_tokens: z.number(),
    cost_usd: z.number(),
  }),
);

const threadSummary = describing<ThreadSummary>()(
  z.object({
    runs: z.number(),
    steps: z.number(),
    tokens: z.number(),
    cost_usd: z.number(),
    duration_ms: z.number(),
  }),
);

const threadStatus = z.enum(['idle', 'busy', 'interrupted', 'error', 'closed']);

export const thread = describing<Thread>()(
  z.object({
    thread_id: z.string(),
    owner: z.string().optional(),
    status: threadStatus,
    metadata: record,
    config: z.object({
      model: z.string(),
      system: z.string().optional(),
      approval: z.enum(['auto', 'require']),
      approval_timeout_s: z.number(),
      tool_rules: z.record(z.string(), z.enum(['allow', 'ask', 'deny'])).optional(),
      max_tokens: z.number().optional(),
      max_cost_usd: z.number().optional(),
      max_steps: z.number(),
      network_hosts: z.array(z.string()).optional(),
      memory: z.boolean().optional(),
    }),
    created_at: timestamp,
    updated_at: timestamp,
    usage,
    summary: threadSummary,
    active_run_id: z.string().optional(),
    queued_run_ids: z.array(z.string()),
    messages_count: z.number(),
    budget: z
      .object({
        spent: z.object({ tokens: z.number(), cost_usd: z.number() }),
        reserved: z.object({ tokens: z.number(), cost_usd: z.number() }),
        left: z.object({ tokens: z.number().optional(), cost_usd: z.number().optional() }),
      })
      .optional()
      .describe('Spent, held by sub-agents, and what the next model call may spend at most'),
  }),
);

export const run = describing<Run>()(
  z.object({
    run_id: z.string(),
    thread_id: z.string(),
    assistant_id: z.string(),
    status: z.enum(['queued', 'running', 'deferred', 'completed', 'failed', 'cancelled']),
    status_reason: z.string().optional(),
    multitask_strategy: z.enum(['enqueue', 'reject', 'interrupt']),
    metadata: record,
    created_at: timestamp,
    updated_at: timestamp,
    started_at: timestamp.optional(),
    ended_at: timestamp.optional(),
    steps: z.number(),
    usage,
    output: z.string().optional(),
    error: z.object({ type: z.string(), message: z.string() }).optional(),
    webhook: z.string().optional(),
    continuation_of: z.string().optional(),
    checkpoint_id: z.string().optional(),
    stream_mode: z.array(z.string()).readonly().optional(),
    first_event_offset: z.number().optional(),
    quota: z.object({ cost_usd: z.number().optional(), ledger: z.string().optional() }).optional(),
    model: z.string(),
    summary: threadSummary.optional(),
    refused_input: z.string().optional(),
  }),
);

const langChainMessage = z.looseObject({
  id: z.string(),
  type: z.enum(['human', 'ai', 'tool']),
  content: z.union([z.string(), z.array(z.object({ type: z.literal('text'), text: z.string() }))]),
});

/** What a run's wait or join answers once it is over: the thread's values, and why it failed. */
export const finalValues = z.object({
  messages: z.array(langChainMessage),
  __error__: z.object({ error: z.string(), message: z.string() }).optional(),
});

const checkpointRef = z.object({
  thread_id: z.string(),
  checkpoint_ns: z.literal(''),
  checkpoint_id: z.string(),
  checkpoint_map: z.null(),
});

/** A thread's state at one checkpoint (api/protocol/checkpoints.ts). */
export const threadState = z.object({
  values: z.object({ messages: z.array(langChainMessage) }),
  next: z.array(z.string()),
  tasks: z.array(record),
  checkpoint: checkpointRef,
  parent_checkpoint: checkpointRef.nullable(),
  metadata: record,
  created_at: timestamp,
  interrupts: z.array(z.unknown()),
});

export const pendingApproval = describing<PendingApproval>()(
  z.object({
    approval_id: z.string(),
    run_id: z.string(),
    tool_use_id: z.string(),
    tool: z.string(),
    input: record,
    requested_at: timestamp,
    expires_at: timestamp,
  }),
);

/** A decision as the thread took it (the approval and the decision), or as queued. */
export const decidedApproval = z.looseObject({
  approval_id: z.string(),
  decision: z.enum(['approve', 'deny']),
  reason: z.string().optional(),
});

export const threadListing = describing<ThreadListing>()(
  z.object({
    thread_id: z.string(),
    owner: z.string().optional(),
    status: threadStatus,
    metadata: record,
    model: z.string().optional(),
    cost_usd: z.number(),
    turns: z.number(),
    created_at: timestamp,
    open: z.boolean(),
  }),
);

/** A canonical (Anthropic-shaped) transcript message, as the export holds it. */
const transcriptMessage = z.looseObject({
  id: z.string(),
  role: z.enum(['user', 'assistant']),
  run_id: z.string(),
  created_at: timestamp,
  content: z.array(z.looseObject({ type: z.string() })),
});

export const transcriptExport = z.object({
  thread,
  messages: z.array(transcriptMessage),
  exported_at: timestamp,
});

/** What an assistant configures (common/assistants.ts `AssistantSettings`). */
const assistantSettings = z.object({
  model: z.string().optional(),
  system: z.string().optional(),
  approval: z.enum(['auto', 'require']).optional(),
  approval_timeout_s: z.number().optional(),
  tool_rules: z.record(z.string(), z.enum(['allow', 'ask', 'deny'])).optional(),
  max_tokens: z.number().optional(),
  max_cost_usd: z.number().optional(),
  max_steps: z.number().optional(),
  network_hosts: z.array(z.string()).optional(),
  memory: z.boolean().optional(),
});

export const assistant = describing<Assistant>()(
  z.object({
    assistant_id: z.string(),
    graph_id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    config: z.object({ configurable: assistantSettings }),
    context: assistantSettings,
    metadata: record,
    version: z.number(),
    created_at: timestamp,
    updated_at: timestamp,
  }),
);
