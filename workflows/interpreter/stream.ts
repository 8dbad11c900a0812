/** Keeps the conversation's event log bounded when it is carried across continue-as-new. */
import type { WorkflowStream, WorkflowStreamState } from '@temporalio/workflow-streams/workflow';
import { limits } from '../../common/limits';

/** Bytes of encoded events carried over; older events are truncated (a cursor before them gets 410). */
const carriedStreamBytes = 512 * 1024;

export function boundedStreamState(stream: WorkflowStream): WorkflowStreamState {
  const state = stream.getState();
  let keep = 0;
  let bytes = 0;
  for (let index = state.log.length - 1; index >= 0 && keep < limits.streamEventsKept; index--) {
    bytes += state.log[index]!.data.length;
    if (bytes > carriedStreamBytes) break;
    keep++;
  }
  const drop = state.log.length - keep;
  if (drop === 0) return state;
  return { ...state, log: state.log.slice(drop), base_offset: state.base_offset + drop };
}

/**
 * The stream's private bookkeeping, read (never written) because `WorkflowStream` exposes its
 * offsets only through a query and `getState()`, which copies the whole log.
 */
interface StreamInternals {
  log: readonly unknown[];
  baseOffset: number;
}

/** The offset the next published event gets. */
export function nextStreamOffset(stream: WorkflowStream): number {
  const internals = stream as unknown as StreamInternals;
  return internals.baseOffset + internals.log.length;
}

/** The oldest offset the log still holds. */
export function streamBaseOffset(stream: WorkflowStream): number {
  return (stream as unknown as StreamInternals).baseOffset;
}
