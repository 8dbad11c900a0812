/**
 * Request schemas. Shapes follow LangGraph Platform's threads and runs API so its clients work
 * for the core calls; unknown keys are dropped rather than refused, for the same reason.
 */
import { z } from 'zod';
import { idPattern, limits } from '../common/limits';
import { ModelProvider, modelNamePattern, qualifyModel } from '../common/model-spec';
import { parseHostEntry } from '../platform/network-hosts';
import type { UserContent } from '../common/transcript';

export const id = z
  .string()
  .min(1)
  .max(limits.maxIdChars)
  .regex(idPattern, 'must start with a letter or digit and use only letters, digits, ".", "_" and "-"');

const providers = Object.values(ModelProvider);

/**
 * `provider:model`, e.g. `anthropic:claude-sonnet-4-6` or `scripted:demo`; or a bare name whose
 * provider is unambiguous (`claude-sonnet-4-5`, `gpt-4o`), which is stored with its provider.
 */
const modelSpec = z
  .string()
  .max(200)
  .regex(
    new RegExp(modelNamePattern),
    `write <provider>:<model> with provider one of ${providers.join(', ')} (a bare claude-…, gpt-… or o… name is taken too)`,
  )
  .transform(qualifyModel);

const metadata = z
  .record(z.string(), z.unknown())
  .refine((value) => JSON.stringify(value).length <= 16_384, 'metadata must be at most 16 KiB of JSON')
  .default({});

const hostLabel = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const port = '(?::(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?';
const hostEntryPattern = new RegExp(
  `^(?:\\*${port}|(?:\\*\\.)?${hostLabel}(?:\\.${hostLabel})*${port}|\\[[0-9A-Fa-f:.]+\\]${port})$`,
);

/** Tool rules one thread may hold: the thread's config travels in every continue-as-new. */
const maxToolRules = 500;

export const threadConfigInput = z.object({
  model: modelSpec.optional(),
  system: z.string().max(50_000).optional(),
  approval: z.enum(['auto', 'require']).optional(),
  approval_timeout_s: z
    .number()
    .positive()
    .max(7 * 24 * 3600)
    .optional(),
  /** Per-tool rules that win over `approval`: `allow` never asks, `ask` always asks, `deny` never runs. */
  tool_rules: z
    .record(z.string().min(1).max(200), z.enum(['allow', 'ask', 'deny']))
    .refine((rules) => Object.keys(rules).length <= maxToolRules, `at most ${maxToolRules} tool rules`)
    .meta({ maxProperties: maxToolRules })
    .optional(),
  max_tokens: z.number().int().positive().optional(),
  max_cost_usd: z.number().positive().optional(),
  max_steps: z.number().int().positive().max(1_000).optional(),
  /** Hosts the thread's commands may reach through Keel's proxy, within the operator's list. */
  network_hosts: z
    .array(
      z
        .string()
        .max(260)
        // What `parseHostEntry` takes, said as a pattern so the OpenAPI document says it too.
        .regex(hostEntryPattern, 'not a host, *.domain or host:port')
        .refine((entry) => typeof parseHostEntry(entry) !== 'string', 'not a host, *.domain or host:port'),
    )
    .max(50)
    .optional(),
  /** The memory tools (remember, recall, forget) on the owner's `["memories"]` store namespace. */
  memory: z.boolean().optional(),
});
export type ThreadConfigInput = z.infer<typeof threadConfigInput>;

export const createThreadBody = z.object({
  thread_id: id.optional(),
  metadata,
  if_exists: z.enum(['raise', 'do_nothing']).default('raise'),
  config: threadConfigInput.default({}),
});

const nonBlank = /\S/;

/**
 * Text with at least one non-blank character: a blank message is refused (422 `invalid_input`),
 * never sent to a model. The pattern is what `/openapi.json` shows.
 */
const text = z
  .string()
  .refine((value) => nonBlank.test(value), {
    message: 'must hold at least one non-blank character',
    params: { code: 'invalid_input' },
  })
  .meta({ pattern: nonBlank.source });

const textBlock = z.object({ type: z.literal('text'), text });

const userRole = z.enum(['user', 'human'], {
  error: 'only user messages can be sent as input (role "user" or type "human")',
});

/** A user message as LangGraph clients send it: `{role: "user"|"human"}` or `{type: "human"}`. */
const inputMessage = z.object({
  role: userRole.optional(),
  type: userRole.optional(),
  content: z.union([text, z.array(textBlock).min(1)], {
    error: (issue) =>
      issue.input === undefined
        ? 'missing: each message needs "content", a string or a list of {"type": "text", "text": …} blocks'
        : 'must be a string with a non-blank character, or a list of {"type": "text", "text": …} blocks',
  }),
});

const { $schema: _dialect, ...inputMessageJson } = z.toJSONSchema(inputMessage, { io: 'input' });

/**
 * `messages` as LangGraph's `add_messages` takes them: a list, one message, or a string (a human
 * message). Read as a list, so a bad message's error names its index.
 */
const inputMessages = z
  .preprocess(
    (value) =>
      typeof value === 'string'
        ? [{ role: 'user', content: value }]
        : typeof value === 'object' && value !== null && !Array.isArray(value)
          ? [value]
          : value,
    z.array(inputMessage).max(100),
  )
  .meta({
    anyOf: [
      { type: 'array', items: inputMessageJson, maxItems: 100 },
      inputMessageJson,
      { type: 'string', pattern: nonBlank.source },
    ],
  });

/**
 * A run's input as LangGraph takes a graph's: Keel's graph has one state key, `messages`, which
 * is applied; keys outside its state are ignored, as LangGraph ignores them. An input that brings
 * no message (`{}`, `{"message": "hi"}`) is a run with nothing new: it ends at once, the thread
 * as it was (decision 0381).
 */
export const graphInput = z
  .looseObject({ messages: inputMessages.optional() })
  .transform(({ messages }) => ({ messages: messages ?? [] }));

export const createRunBody = z.object({
  assistant_id: z.string().min(1).max(200).default('agent'),
  input: graphInput,
  run_id: id.optional(),
  multitask_strategy: z.enum(['enqueue', 'reject', 'interrupt']).default('enqueue'),
  webhook: z.url({ protocol: /^https?$/ }).optional(),
  /**
   * The run's model: `model`, or `configurable.model` as LangGraph's clients send it (the other
   * `configurable` keys are LangGraph's own, and read where they mean something).
   */
  config: z
    .object({
      model: modelSpec.optional(),
      configurable: z.looseObject({ model: modelSpec.optional() }).optional(),
    })
    .default({})
    .transform(({ model, configurable }) => {
      const chosen = model ?? configurable?.model;
      return chosen === undefined ? {} : { model: chosen };
    }),
  metadata,
  if_not_exists: z.enum(['create', 'reject']).default('reject'),
});
export type CreateRunBody = z.infer<typeof createRunBody>;

/** A number in a query string: a blank value is refused, not read as 0. */
export const queryNumber = <S extends z.ZodType<number>>(schema: S) =>
  z.preprocess((value) => (typeof value === 'string' && value.trim() !== '' ? Number(value) : value), schema);

export const waitQuery = z.object({
  /** Seconds to wait before answering 202 with the run `deferred`; 0 answers at once. */
  timeout_s: queryNumber(z.number().min(0).max(3_600).default(300)),
});

export const listQuery = z.object({
  limit: queryNumber(z.number().int().positive().max(1_000).default(100)),
});

export const cancelBody = z.object({ reason: z.string().max(1_000).optional() }).default({});

/** The text blocks of every input message, in order. */
export function inputContent(body: CreateRunBody): UserContent[] {
  return body.input.messages.flatMap((message): UserContent[] =>
    typeof message.content === 'string'
      ? [{ type: 'text', text: message.content }]
      : message.content.map((block) => ({ type: 'text', text: block.text })),
  );
}

/** Path parameters: an id the schema refuses names nothing, so the route answers 404. */
export const threadPath = { thread_id: id };
export const runPath = { thread_id: id, run_id: id };
