/**
 * Run request bodies and queries as LangGraph's SDKs send them: the create-run body of
 * `api/schemas.ts` plus what the protocol adds (docs/decisions/0094-runs.md). What Keel cannot
 * honour is refused with 422, never accepted and ignored.
 */
import { z } from 'zod';
import type { RunStatus } from '../../common/run';
import { createRunBody } from '../schemas';
import { runCommand } from '../protocol/interrupts';

const checkpointRef = z.union([
  z.string(),
  z.object({ checkpoint_id: z.string().nullish() }).passthrough(),
  z.object({ configurable: z.object({ checkpoint_id: z.string().nullish() }).passthrough() }).passthrough(),
]);

/** The run body's fields, `input` and `command` apart (a run has exactly one of them). */
export const protocolRunFields = createRunBody.omit({ input: true }).extend({
  /**
   * `rollback` cancels the thread's run under way, as `interrupt` does: the transcript is what every
   * model call was made from, and a tool's side effects cannot be un-run (see decision 0094).
   */
  multitask_strategy: z.enum(['enqueue', 'reject', 'interrupt', 'rollback']).default('enqueue'),
  /** Every Keel stream is resumable; `false` is accepted and changes nothing. */
  stream_resumable: z.boolean().nullish(),
  /**
   * Accepted, but a disconnect never cancels a Keel run (DESIGN §5): `useStream` sends `cancel`
   * by default, and refusing it would refuse every chat UI (decision 0094).
   */
  on_disconnect: z.enum(['continue', 'cancel']).nullish(),
  /** Stateless runs: delete the thread when the run is over (the default), or keep it. */
  on_completion: z.enum(['delete', 'keep']).nullish(),
  /** Fork: go on from this earlier checkpoint, keeping the branch it leaves (decision 0097). */
  checkpoint_id: z.string().max(200).nullish(),
  checkpoint: checkpointRef.nullish(),
  after_seconds: z
    .literal(0, { error: 'delayed runs are not supported; schedule one with a cron instead' })
    .nullish(),
  interrupt_before: z
    .array(z.string())
    .max(0, { error: "Keel's graph interrupts only for approvals (tool rules and approval mode)" })
    .nullish(),
  interrupt_after: z
    .array(z.string())
    .max(0, { error: "Keel's graph interrupts only for approvals (tool rules and approval mode)" })
    .nullish(),
});

const absent = (value: unknown): boolean => value === undefined || value === null;

/**
 * A run body: `fields` with `input` (a new turn), or `command` (to resume an interrupt), not
 * both. Neither is LangGraph's run "from the current state of the thread": a run that brings no
 * message (decision 0381). The check is a refinement (so a bad field elsewhere still says
 * which); the document states the same rule with `not`.
 */
export function withInputOrCommand<Shape extends z.core.$ZodLooseShape>(fields: z.ZodObject<Shape>) {
  return fields
    .extend({ input: createRunBody.shape.input.nullish(), command: runCommand.nullish() })
    .refine(
      (body) => {
        const { input, command } = body as { input?: unknown; command?: unknown };
        return absent(input) || absent(command);
      },
      {
        message: 'send either input (a new turn) or command (to resume an interrupt), not both',
        path: ['input'],
      },
    )
    .meta({
      not: {
        required: ['input', 'command'],
        properties: { input: { not: { type: 'null' } }, command: { not: { type: 'null' } } },
      },
    });
}

export const protocolRunBody = withInputOrCommand(protocolRunFields);

/** A stateless run's body: a thread is made for it, so there is nothing to resume; input only. */
export const statelessRunBody = protocolRunFields.extend({
  input: createRunBody.shape.input,
  command: z.null({ error: 'a stateless run has no thread to resume: send input' }).optional(),
});
export type ProtocolRunBody = z.infer<typeof protocolRunBody>;

/** The checkpoint a run names, if any. */
export function checkpointIdOf(body: ProtocolRunBody): string | undefined {
  const ref = body.checkpoint;
  const fromRef =
    ref === undefined || ref === null
      ? undefined
      : typeof ref === 'string'
        ? ref
        : 'configurable' in ref && typeof ref.configurable === 'object'
          ? (ref.configurable as { checkpoint_id?: string | null }).checkpoint_id
          : (ref as { checkpoint_id?: string | null }).checkpoint_id;
  return body.checkpoint_id ?? fromRef ?? undefined;
}

/**
 * LangGraph's run statuses as the Keel statuses they name (decision 0408): a run list filtered
 * by LangGraph's names finds the same runs. No Keel run times out as such (a budget or an
 * approval timeout fails it), so `timeout` finds none.
 */
export const langGraphRunStatuses = {
  pending: ['queued'],
  running: ['running', 'deferred'],
  success: ['completed'],
  error: ['failed'],
  interrupted: ['cancelled'],
  timeout: [],
} as const satisfies Record<string, readonly RunStatus[]>;

const keelRunStatuses = ['queued', 'running', 'deferred', 'completed', 'failed', 'cancelled'] as const;

export const runListQuery = z.object({
  limit: z.coerce.number().int().positive().max(1_000).default(10),
  offset: z.coerce.number().int().min(0).max(10_000).default(0),
  status: z
    .enum([...keelRunStatuses, 'pending', 'success', 'error', 'interrupted', 'timeout'])
    .optional()
    .describe(
      "Keel's run status, or LangGraph's name for one (pending, success, error, interrupted, timeout)",
    ),
  select: z.unknown().optional(),
});

export const cancelQuery = z.object({
  wait: z
    .enum(['0', '1', 'true', 'false'])
    .default('0')
    .transform((value) => value === '1' || value === 'true'),
  action: z.enum(['interrupt', 'rollback']).default('interrupt'),
});

/** The Keel statuses a run list's `status` filter takes, from either vocabulary. */
export function runStatusesOf(
  status: z.infer<typeof runListQuery>['status'],
): readonly RunStatus[] | undefined {
  if (status === undefined) return undefined;
  return status in langGraphRunStatuses
    ? langGraphRunStatuses[status as keyof typeof langGraphRunStatuses]
    : [status as RunStatus];
}
