/** Sub-agents: the `spawn_agent` tool and what a finished child reports to its parent. */
import type { Run } from './run';

/** The tool the workflow carries out itself, by starting a child conversation. */
export const spawnAgentToolName = 'spawn_agent';

/** Seconds a foreground `spawn_agent` waits for the child before it goes on in the background. @default 60 */
export const defaultChildTimeoutS = 60;

export interface SpawnAgentInput {
  task: string;
  /** Return at once; the result arrives later as a continuation run. @default false */
  background?: boolean;
  timeout_s?: number;
}

/** Where a child thread came from, in its metadata. */
export interface ChildOrigin {
  parent_thread_id: string;
  parent_run_id: string;
  tool_use_id: string;
  task: string;
}

/** The `childCompleted` signal's argument: the child's one run, finished. */
export interface ChildCompleted extends ChildOrigin {
  child_thread_id: string;
  run: Run;
}

export function childOriginOf(metadata: Record<string, unknown>): ChildOrigin | undefined {
  const origin = metadata.keel_child_of as ChildOrigin | undefined;
  return typeof origin === 'object' && origin !== null && typeof origin.parent_thread_id === 'string'
    ? origin
    : undefined;
}
