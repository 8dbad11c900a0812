/**
 * Request schemas. Shapes follow LangGraph Platform's threads and runs API so its clients work
 * for the core calls; unknown keys are dropped rather than refused, for the same reason.
 */
import { z } from 'zod';
import { idPattern, limits } from '../common/limits';
import { parseModelSpec } from '../common/model-spec';
import type { UserContent } from '../common/transcript';

export const id = z
  .string()
  .min(1)
  .max(limits.maxIdChars)
  .regex(idPattern, 'must start with a letter or digit and use only letters, digits, ".", "_" and "-"');

const modelSpec = z.string().superRefine((value, context) => {
  const parsed = parseModelSpec(value);
  if (typeof parsed === 'string') context.addIssue({ code: 'custom', message: parsed });
});

const metadata = z
  .record(z.string(), z.unknown())
  .refine((value) => JSON.stringify(value).length <= 16_384, 'metadata must be at most 16 KiB of JSON')
  .default({});

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
  tool_rules: z.record(z.string().min(1).max(200), z.enum(['allow', 'ask', 'deny'])).optional(),
  max_tokens: z.number().int().positive().optional(),
  max_cost_usd: z.number().positive().optional(),
  max_steps: z.number().int().positive().max(1_000).optional(),
});
export type ThreadConfigInput = z.infer<typeof threadConfigInput>;

export const createThreadBody = z.object({
  thread_id: id.optional(),
  metadata,
  if_exists: z.enum(['raise', 'do_nothing']).default('raise'),
  config: threadConfigInput.default({}),
});

const textBlock = z.object({ type: z.literal('text'), text: z.string() });

/** A user message as LangGraph clients send it: `{role: "user"|"human"}` or `{type: "human"}`. */
const inputMessage = z
  .object({
    role: z.string().optional(),
    type: z.string().optional(),
    content: z.union([z.string(), z.array(textBlock).min(1)], {
      error: (issue) =>
        issue.input === undefined
          ? 'missing: each message needs "content", a string or a list of {"type": "text", "text": …} blocks'
          : 'must be a string or a list of {"type": "text", "text": …} blocks',
    }),
  })
  .refine((message) => ['user', 'human'].includes(message.role ?? message.type ?? 'user'), {
    message: 'only user messages can be sent as input (role "user" or "human")',
  });

export const createRunBody = z.object({
  assistant_id: z.string().min(1).max(200).default('agent'),
  input: z.object({ messages: z.array(inputMessage).min(1).max(100) }),
  run_id: id.optional(),
  multitask_strategy: z.enum(['enqueue', 'reject', 'interrupt']).default('enqueue'),
  webhook: z.url({ protocol: /^https?$/ }).optional(),
  config: z.object({ model: modelSpec.optional() }).default({}),
  metadata,
  if_not_exists: z.enum(['create', 'reject']).default('reject'),
});
export type CreateRunBody = z.infer<typeof createRunBody>;

export const waitQuery = z.object({
  /** Seconds to wait before answering 202 with the run `deferred`. */
  timeout_s: z.coerce.number().positive().max(3_600).default(300),
});

export const listQuery = z.object({ limit: z.coerce.number().int().positive().max(1_000).default(100) });

export const cancelBody = z.object({ reason: z.string().max(1_000).optional() }).default({});

/** The text blocks of every input message, in order. */
export function inputContent(body: CreateRunBody): UserContent[] {
  return body.input.messages.flatMap((message): UserContent[] =>
    typeof message.content === 'string'
      ? [{ type: 'text', text: message.content }]
      : message.content.map((block) => ({ type: 'text', text: block.text })),
  );
}
