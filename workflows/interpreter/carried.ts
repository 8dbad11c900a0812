/**
 * The state a conversation carries across continue-as-new, in parts: its long lists (the
 * transcript, the runs, the earlier branches, the event log) travel as separate arguments of
 * about `carriedPartChars` each, so no payload is the whole conversation (1.2 MiB after 1,000
 * short turns, where the server warns at 512 KiB). The first argument keeps the rest.
 *
 * A run of an earlier release reads a first argument without lists and fails its first workflow
 * task (its state has no transcript), to be retried until a worker of this release takes it: it
 * never goes on with an empty conversation.
 */
import type { WorkflowStreamState } from '@temporalio/workflow-streams/workflow';
import type { CopyRequest, ThreadCopy } from '../../common/messages';
import { initialState, type ThreadState } from '../core/state';

/**
 * Characters of JSON per part: at most three bytes each in UTF-8, so a part stays under 512 KiB
 * whatever the text, encryption included. A single item larger than this travels alone.
 */
export const carriedPartChars = 128 * 1024;

/** The lists carried apart. */
type ListName = 'transcript' | 'runs' | 'branches' | 'stream_log';

/** One argument after the first: a slice of one list. */
export interface CarriedPart {
  list: ListName;
  items: unknown[];
}

/** The first argument's carried state: everything but the lists. */
export interface CarriedInParts {
  state: Omit<ThreadState, 'transcript' | 'runs' | 'branches'>;
  stream: Omit<WorkflowStreamState, 'log'>;
  /** How many parts follow the first argument (a check that none went missing). */
  parts: number;
}

/** What earlier releases carried: the whole state in the first argument. */
export interface CarriedWhole {
  state: ThreadState;
  stream: WorkflowStreamState;
}

export type Carried = CarriedWhole | CarriedInParts;

function slices(list: ListName, items: readonly unknown[]): CarriedPart[] {
  const parts: CarriedPart[] = [];
  let current: unknown[] = [];
  let chars = 0;
  for (const item of items) {
    const size = JSON.stringify(item).length + 1;
    if (current.length > 0 && chars + size > carriedPartChars) {
      parts.push({ list, items: current });
      current = [];
      chars = 0;
    }
    current.push(item);
    chars += size;
  }
  if (current.length > 0) parts.push({ list, items: current });
  return parts;
}

/** The carried state as a first argument and the parts that follow it. */
export function splitCarried(
  state: ThreadState,
  stream: WorkflowStreamState,
): { carried: CarriedInParts; parts: CarriedPart[] } {
  const { transcript, runs, branches, ...rest } = state;
  const { log, ...streamRest } = stream;
  const parts = [
    ...slices('transcript', transcript),
    ...slices('runs', runs),
    ...slices('branches', branches ?? []),
    ...slices('stream_log', log),
  ];
  return { carried: { state: rest, stream: streamRest, parts: parts.length }, parts };
}

/** The state and event log a run continues with, from either shape. */
export function joinCarried(carried: Carried, parts: readonly CarriedPart[]): CarriedWhole {
  if (!('parts' in carried)) return carried;
  if (parts.length !== carried.parts)
    throw new Error(`continue-as-new carried ${carried.parts} parts of the state, ${parts.length} arrived`);
  const lists: Record<ListName, unknown[]> = { transcript: [], runs: [], branches: [], stream_log: [] };
  for (const part of parts) {
    const list = lists[part.list];
    for (const item of part.items) list.push(item);
  }
  const state = {
    ...carried.state,
    transcript: lists.transcript,
    runs: lists.runs,
    ...(lists.branches.length === 0 ? {} : { branches: lists.branches }),
  } as ThreadState;
  const stream = { ...carried.stream, log: lists.stream_log } as WorkflowStreamState;
  return { state, stream };
}

/** A new thread's empty event log. */
const emptyStream: WorkflowStreamState = {
  log: [],
  base_offset: 0,
  publisher_sequences: {},
  publisher_last_seen: {},
};

/**
 * The start of a copy of this thread (`getThreadCopy`): the source's transcript, earlier branches
 * (so the copy's history lists the same checkpoints), compaction and message sequence, with no
 * runs and no spend of its own. A thread with a run under way or queued is not copied.
 */
export function copyOf(state: ThreadState, request: CopyRequest): ThreadCopy {
  if (state.active !== null || state.queue.length > 0) return { busy: true };
  const { config, metadata } = state.thread;
  const copied: ThreadState = {
    ...initialState({ ...request, config, metadata }),
    transcript: state.transcript,
    compacted_messages: state.compacted_messages,
    next_sequence: state.next_sequence,
    ...(state.branches === undefined ? {} : { branches: state.branches }),
  };
  // In parts, as continue-as-new carries it: no payload is the whole transcript.
  const { carried, parts } = splitCarried(copied, emptyStream);
  return { busy: false, config, metadata, carried: carried as unknown as Record<string, unknown>, parts };
}
