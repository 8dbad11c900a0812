/** What the thread tells Temporal visibility about its runs, so `GET /runs` can find active ones. */
import type { RunStatus } from '../../common/run';
import { isTerminal } from '../../common/run';
import type { ThreadState } from './state';

/** The distinct statuses of the thread's unfinished runs, sorted (stable, so upserts only on change). */
export function activeRunStatuses(state: ThreadState): RunStatus[] {
  const statuses = new Set<RunStatus>();
  for (const run of state.runs) if (!isTerminal(run.status)) statuses.add(run.status);
  return [...statuses].sort();
}
