/**
 * Crons: runs on a Temporal Schedule (docs/decisions/0096-crons-on-schedules.md). Each fire starts
 * a `cronRunWorkflow`, which hands the run to its thread (or to a new one) as any run arrives.
 */
import type { SubmitInput } from './messages';
import type { ThreadConfig } from './thread';

/** What a schedule's action starts: everything the run needs, fixed when the cron was made. */
export interface CronRunInput {
  cron_id: string;
  /** The thread the runs go to; absent for a stateless cron (each run gets a new thread). */
  thread_id?: string;
  /**
   * That thread's workflow id, as the API resolved it for the cron's owner (decision 0160);
   * absent in a cron made before ids were scoped, whose thread is `conversation-<thread_id>`.
   */
  thread_workflow_id?: string;
  /** The run, less its id (each fire makes its own). */
  input: Omit<SubmitInput, 'run_id'>;
  /** For a stateless cron: the new thread's owner, metadata and configuration. */
  new_thread?: {
    owner?: string;
    /**
     * The owner's id scope for the new thread's workflow id, so the fire makes the owner's thread,
     * not another owner's of the same id (decision 0160).
     */
    scope?: string;
    metadata: Record<string, unknown>;
    config: ThreadConfig;
  };
}

/** A cron as LangGraph's API shows it; also the schedule's memo. */
export interface Cron {
  cron_id: string;
  assistant_id: string;
  thread_id: string | null;
  on_run_completed: 'keep' | null;
  end_time: string | null;
  schedule: string;
  created_at: string;
  updated_at: string;
  payload: Record<string, unknown>;
  user_id: string | null;
  next_run_date: string | null;
  metadata: Record<string, unknown>;
  enabled: boolean;
}

export const scheduleIdFor = (cronId: string): string => `cron-${cronId}`;
