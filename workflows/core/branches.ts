/**
 * Forks: a run that names an earlier checkpoint goes on from it, as a chat UI's "edit and
 * regenerate" does. The transcript is cut back to that commit boundary (a step's end, so no
 * tool_use is ever parted from its results) and what came after is kept as an earlier branch.
 *
 * The tree the thread's messages form is common/branch-tree.ts's. Pure.
 */
import { branchPaths, isCheckpoint, pathToCheckpoint, treeOf } from '../../common/branch-tree';
import { limits } from '../../common/limits';
import { sequenceOf, type Branch, type Message } from '../../common/transcript';
import { revised, type ThreadState } from './state';

/** Whether the thread holds checkpoint `checkpointId`. */
export const hasCheckpoint = (state: ThreadState, checkpointId: string): boolean =>
  isCheckpoint(state.transcript, state.branches ?? [], state.compacted_messages, checkpointId);

/**
 * The thread going on from `checkpointId`: the transcript becomes the path to it, and every
 * message off that path is kept in branches. Undefined when it names no checkpoint.
 */
export function forkAt(state: ThreadState, checkpointId: string): ThreadState | undefined {
  const path = pathToCheckpoint(
    state.transcript,
    state.branches ?? [],
    state.compacted_messages,
    checkpointId,
  );
  if (path === undefined) return undefined;
  const current = state.transcript;
  if (path.length === current.length && path.at(-1)?.id === current.at(-1)?.id) return state;
  const nodes = treeOf(current, state.branches ?? [], state.compacted_messages);
  const onPath = new Set(path.map((message) => message.id));
  const rest = [...nodes.values()]
    .filter((node) => !onPath.has(node.message.id))
    .sort((a, b) => (sequenceOf(a.message.id) ?? 0) - (sequenceOf(b.message.id) ?? 0));
  // A parent always comes before its children (ids only grow), so each message either continues
  // the branch that ends with its parent or starts a branch of its own.
  const branches: Branch[] = [];
  const endingWith = new Map<string, Branch>();
  for (const { message, parent } of rest) {
    const continued = endingWith.get(parent);
    const branch = continued ?? { parent, messages: [] };
    if (continued === undefined) branches.push(branch);
    endingWith.delete(parent);
    branch.messages.push(message);
    endingWith.set(message.id, branch);
  }
  // The new transcript's size is counted afresh when next needed.
  const { transcript_chars: _stale, ...forked } = revised(state);
  return {
    ...forked,
    transcript: path,
    branches: bounded(path, branches, state.compacted_messages),
  };
}

/**
 * Keeps branches within `limits.branchChars` and `limits.branchesKept`: those touched longest
 * ago go first, then any left hanging off a message no longer kept.
 */
export function bounded(transcript: readonly Message[], branches: Branch[], compacted: number): Branch[] {
  const newest = (branch: Branch) => sequenceOf(branch.messages.at(-1)?.id ?? '') ?? 0;
  const byAge = [...branches].sort((a, b) => newest(b) - newest(a));
  const kept = new Set<Branch>();
  let size = 0;
  for (const branch of byAge) {
    size += JSON.stringify(branch.messages).length;
    if (size > limits.branchChars || kept.size >= limits.branchesKept) break;
    kept.add(branch);
  }
  return withoutOrphans(
    transcript,
    branches.filter((branch) => kept.has(branch)),
    compacted,
  );
}

/** The branches still reachable from the transcript (a compaction or a dropped branch cuts some off). */
export function withoutOrphans(
  transcript: readonly Message[],
  branches: Branch[],
  compacted: number,
): Branch[] {
  if (branches.length === 0) return branches;
  const reachable = new Set(branchPaths(transcript, branches, compacted).map(({ branch }) => branch));
  return branches.filter((branch) => reachable.has(branch));
}
