/**
 * Crons on Temporal Schedules (docs/decisions/0096-crons-on-schedules.md): one schedule per cron,
 * id `cron-<cron_id>`, whose action starts a `cronRunWorkflow` that delivers the run. The cron as
 * LangGraph shows it is the schedule's memo; a search lists schedules and reads their memos.
 */
import { randomUUID } from 'node:crypto';
import { type Client, ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { scheduleIdFor, type Cron, type CronRunInput } from '../../common/crons';
import { checkInput } from '../../common/input-rules';
import type { RunService } from '../runs/run-service';
import type { ThreadService } from '../threads/thread-service';
import type { Owner } from '../threads/thread-ref';
import { ApiError } from '../errors';
import { inputContent, type CreateRunBody } from '../schemas';
import { runMetadataOf, type Assistants } from '../assistants/assistant-service';
import type { CreateCronBody, SearchCronsBody } from './cron-schemas';
import { scopeFor } from '../threads/thread-ref';
import { tooFrequent } from './cron-frequency';

/** The schedule's memo: the cron, and whose and where it is. */
interface CronMemo {
  cron: Cron;
  task_queue: string;
  owner?: string;
}

export const cronNotFound = (cronId: string): ApiError =>
  new ApiError(404, 'cron_not_found', `cron ${cronId.slice(0, 100)} not found`);

export class Crons {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string,
    private readonly threads: ThreadService,
    private readonly runs: RunService,
    private readonly assistants: Assistants,
  ) {}

  async create(threadId: string | undefined, body: CreateCronBody, owner: Owner): Promise<Cron> {
    const settings = await this.assistants.settingsFor(body.assistant_id, owner);
    const thread = threadId === undefined ? undefined : await this.threads.authorize(threadId, owner);
    if (body.webhook !== undefined && body.webhook !== null) await this.runs.checkWebhook(body.webhook);
    const cronId = randomUUID();
    const config = settings === undefined ? undefined : this.threads.threadConfig(settings);
    const input: CronRunInput['input'] = {
      assistant_id: body.assistant_id,
      content: inputContent({ input: body.input } as CreateRunBody),
      multitask_strategy:
        body.multitask_strategy === 'rollback' ? 'interrupt' : (body.multitask_strategy ?? 'enqueue'),
      metadata: { ...body.metadata, cron_id: cronId },
      ...(body.config.model === undefined ? {} : { model: body.config.model }),
      ...(config === undefined ? {} : { config, model: body.config.model ?? config.model }),
      ...(body.webhook === undefined || body.webhook === null ? {} : { webhook: body.webhook }),
    };
    const invalid = checkInput({ ...input, run_id: cronId });
    if (invalid !== undefined) throw new ApiError(422, 'invalid_input', invalid.message, 'input.messages');
    const run: CronRunInput = {
      cron_id: cronId,
      ...(thread === undefined
        ? {}
        : { thread_id: thread.thread_id, thread_workflow_id: thread.workflow_id }),
      input,
      ...(threadId !== undefined
        ? {}
        : {
            new_thread: {
              ...(owner === undefined ? {} : { owner, scope: scopeFor(owner) }),
              metadata: { ...runMetadataOf(body.assistant_id), cron_id: cronId },
              config: config ?? this.threads.threadConfig({}),
            },
          }),
    };
    const now = new Date().toISOString();
    const enabled = body.enabled ?? true;
    const cron: Cron = {
      cron_id: cronId,
      assistant_id: body.assistant_id,
      thread_id: threadId ?? null,
      on_run_completed: threadId === undefined ? 'keep' : null,
      end_time: body.end_time ?? null,
      schedule: body.schedule,
      created_at: now,
      updated_at: now,
      payload: { input: body.input, metadata: body.metadata, config: body.config },
      user_id: owner ?? null,
      next_run_date: null,
      metadata: body.metadata,
      enabled,
    };
    try {
      await this.refuseFrequent(body.schedule);
      const handle = await this.client.schedule.create({
        scheduleId: scheduleIdFor(cronId),
        spec: {
          cronExpressions: [body.schedule],
          ...(body.end_time === undefined || body.end_time === null
            ? {}
            : { endAt: new Date(body.end_time) }),
        },
        action: {
          type: 'startWorkflow',
          workflowType: 'cronRunWorkflow',
          workflowId: `cron-run-${cronId}`,
          taskQueue: this.taskQueue,
          args: [run],
        },
        // A fire while the last one still delivers is not lost: the run queues on its thread.
        policies: { overlap: ScheduleOverlapPolicy.ALLOW_ALL },
        memo: {
          cron,
          task_queue: this.taskQueue,
          ...(owner === undefined ? {} : { owner }),
        } satisfies CronMemo,
        state: { paused: !enabled },
      });
      const description = await handle.describe();
      return { ...cron, next_run_date: description.info.nextActionTimes[0]?.toISOString() ?? null };
    } catch (error) {
      // The client checks the expression before sending it (a TypeError saying what is wrong);
      // the server checks the rest (INVALID_ARGUMENT).
      if (error instanceof TypeError || isInvalidArgument(error))
        throw new ApiError(
          422,
          'invalid_schedule',
          `schedule "${body.schedule}" is not a cron expression Temporal accepts (${error instanceof Error ? error.message : 'invalid'}); e.g. "0 9 * * 1-5", in UTC`,
          'schedule',
        );
      throw error;
    }
  }

  /**
   * 422 for a schedule firing more often than once a minute, as Temporal reads it: a paused
   * schedule that starts nothing is made, described and deleted, before the cron's own exists
   * (so no search ever shows a cron that is refused, or one paused only while it was checked).
   */
  private async refuseFrequent(schedule: string): Promise<void> {
    const probe = await this.client.schedule.create({
      scheduleId: `keel-schedule-check-${randomUUID()}`,
      spec: { cronExpressions: [schedule] },
      action: { type: 'startWorkflow', workflowType: 'cronRunWorkflow', taskQueue: this.taskQueue, args: [] },
      state: { paused: true, note: 'Keel checks how often a cron fires; deleted at once' },
    });
    let frequent: string | undefined;
    try {
      frequent = tooFrequent((await probe.describe()).spec);
    } finally {
      await probe.delete();
    }
    if (frequent !== undefined)
      throw new ApiError(
        422,
        'schedule_too_frequent',
        `schedule "${schedule}" fires more often than once a minute (${frequent}); a cron runs at most every minute, e.g. "* * * * *"`,
        'schedule',
      );
  }

  /** Crons of this deployment (and, when the API authenticates, of this caller) that match. */
  async search(filter: Pick<SearchCronsBody, 'assistant_id' | 'thread_id' | 'enabled'>, owner: Owner) {
    const found: Cron[] = [];
    for await (const schedule of this.client.schedule.list()) {
      if (!schedule.scheduleId.startsWith('cron-')) continue;
      const memo = schedule.memo as Partial<CronMemo> | undefined;
      if (memo?.cron === undefined || memo.task_queue !== this.taskQueue) continue;
      if (owner !== undefined && memo.owner !== owner) continue;
      const cron: Cron = {
        ...memo.cron,
        enabled: !schedule.state.paused,
        next_run_date: schedule.info.nextActionTimes[0]?.toISOString() ?? null,
      };
      if (given(filter.assistant_id) && cron.assistant_id !== filter.assistant_id) continue;
      if (given(filter.thread_id) && cron.thread_id !== filter.thread_id) continue;
      if (given(filter.enabled) && cron.enabled !== filter.enabled) continue;
      found.push(cron);
    }
    return found;
  }

  async delete(cronId: string, owner: Owner): Promise<void> {
    const handle = this.client.schedule.getHandle(scheduleIdFor(cronId));
    try {
      const description = await handle.describe();
      const memo = description.memo as Partial<CronMemo> | undefined;
      if (memo?.task_queue !== this.taskQueue || (owner !== undefined && memo.owner !== owner))
        throw cronNotFound(cronId);
      await handle.delete();
    } catch (error) {
      if (error instanceof ScheduleNotFoundError) throw cronNotFound(cronId);
      throw error;
    }
  }
}

/**
 * Sorts crons as LangGraph's `sort_by`/`sort_order` ask: by `created_at` unless another key is
 * named, descending unless `asc` is (LangGraph's order for any key); a cron without the key
 * (no `end_time`) comes first ascending, as LangGraph's `datetime.min` puts it.
 */
export function sortCrons(crons: Cron[], body: SearchCronsBody): Cron[] {
  const key = body.sort_by ?? 'created_at';
  const order = body.sort_order ?? 'desc';
  // Ties go by id, so pages never overlap or skip.
  const sorted = [...crons].sort(
    (a, b) => String(a[key] ?? '').localeCompare(String(b[key] ?? '')) || a.cron_id.localeCompare(b.cron_id),
  );
  return order === 'desc' ? sorted.reverse() : sorted;
}

const given = <T>(value: T | null | undefined): value is T => value !== undefined && value !== null;

/** A gRPC INVALID_ARGUMENT (3) from the server, however the client wrapped it. */
function isInvalidArgument(error: unknown): boolean {
  for (let current = error; current !== undefined && current !== null;) {
    if ((current as { code?: unknown }).code === 3) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}
