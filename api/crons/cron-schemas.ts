/** Request bodies of the crons endpoints, as LangGraph's SDKs send them. */
import { z } from 'zod';
import { createRunBody } from '../schemas';

export const createCronBody = z.object({
  /** A cron expression, in UTC (five fields, or what Temporal's schedule spec accepts). */
  schedule: z.string().min(1).max(200),
  assistant_id: createRunBody.shape.assistant_id,
  input: createRunBody.shape.input,
  metadata: createRunBody.shape.metadata,
  config: createRunBody.shape.config,
  webhook: createRunBody.shape.webhook.nullish(),
  multitask_strategy: z.enum(['enqueue', 'reject', 'interrupt', 'rollback']).nullish(),
  end_time: z.iso.datetime({ offset: true }).nullish(),
  enabled: z.boolean().nullish(),
  /**
   * A stateless cron keeps the thread each run makes: its output lives there. `delete` is refused
   * rather than promised (decision 0096).
   */
  on_run_completed: z
    .literal('keep', {
      error: 'a cron keeps the threads its runs make; delete them with POST /threads/cleanup',
    })
    .nullish(),
  interrupt_before: z
    .array(z.string())
    .max(0, { error: "Keel's graph interrupts only for approvals" })
    .nullish(),
  interrupt_after: z
    .array(z.string())
    .max(0, { error: "Keel's graph interrupts only for approvals" })
    .nullish(),
});
export type CreateCronBody = z.infer<typeof createCronBody>;

export const searchCronsBody = z
  .object({
    assistant_id: z.string().max(200).nullish(),
    thread_id: z.string().max(200).nullish(),
    enabled: z.boolean().nullish(),
    limit: z.number().int().min(1).max(1_000).default(10),
    offset: z.number().int().min(0).default(0),
    sort_by: z
      .enum(['cron_id', 'assistant_id', 'thread_id', 'next_run_date', 'end_time', 'created_at', 'updated_at'])
      .nullish(),
    sort_order: z.enum(['asc', 'desc']).nullish(),
    select: z.array(z.string()).nullish(),
  })
  .default({ limit: 10, offset: 0 });
export type SearchCronsBody = z.infer<typeof searchCronsBody>;

export const countCronsBody = z
  .object({ assistant_id: z.string().max(200).nullish(), thread_id: z.string().max(200).nullish() })
  .default({});
