/**
 * The thread's messages as a tree: the transcript is the current path from the root, and each
 * branch a run of messages hanging off a checkpoint. Message ids are never reused, so a
 * checkpoint id (the id of its step's last message) names one point of the tree, whatever branch
 * it is on. Pure; read by the thread (forks, workflows/core/branches.ts) and by the API (a thread's
 * history, and a run's checkpoint checked before it is sent).
 */
import { endsStep, type Branch, type Message } from './transcript';

/** The id of the empty checkpoint a thread starts from (api/protocol/checkpoints.ts). */
export const startCheckpoint = 'start';

/** Above the oldest message kept: `start` when nothing was compacted away. */
const root = (compacted: number): string => (compacted === 0 ? startCheckpoint : '');

interface TreeNode {
  message: Message;
  parent: string;
}

/** Every message of the thread, transcript and branches, with the checkpoint or message before it. */
export function treeOf(transcript: readonly Message[], branches: readonly Branch[], compacted: number) {
  const nodes = new Map<string, TreeNode>();
  const add = (messages: readonly Message[], parent: string) => {
    let before = parent;
    for (const message of messages) {
      nodes.set(message.id, { message, parent: before });
      before = message.id;
    }
  };
  add(transcript, root(compacted));
  for (const branch of branches) add(branch.messages, branch.parent);
  return nodes;
}

/** The messages from the root through `id`, oldest first; undefined when `id` is not in the tree. */
function pathIn(nodes: ReadonlyMap<string, TreeNode>, id: string, rootId: string): Message[] | undefined {
  const path: Message[] = [];
  for (let at = id; at !== rootId;) {
    const node = nodes.get(at);
    if (node === undefined || path.length > nodes.size) return undefined;
    path.push(node.message);
    at = node.parent;
  }
  return path.reverse();
}

/** Each branch's whole path: the messages before it (from the root), then its own. */
export function branchPaths(
  transcript: readonly Message[],
  branches: readonly Branch[],
  compacted: number,
): Array<{ branch: Branch; path: Message[] }> {
  const nodes = treeOf(transcript, branches, compacted);
  return branches.flatMap((branch) => {
    const before = branch.parent === root(compacted) ? [] : pathIn(nodes, branch.parent, root(compacted));
    return before === undefined ? [] : [{ branch, path: [...before, ...branch.messages] }];
  });
}

/** The path a thread forked at `checkpointId` goes on from; undefined when it names no checkpoint. */
export function pathToCheckpoint(
  transcript: readonly Message[],
  branches: readonly Branch[],
  compacted: number,
  checkpointId: string,
): Message[] | undefined {
  const rootId = root(compacted);
  if (checkpointId === rootId && rootId === startCheckpoint) return [];
  const path = pathIn(treeOf(transcript, branches, compacted), checkpointId, rootId);
  const last = path?.at(-1);
  return last !== undefined && endsStep(last) ? path : undefined;
}

/** Whether a thread holds checkpoint `checkpointId`, on its transcript or an earlier branch. */
export function isCheckpoint(
  transcript: readonly Message[],
  branches: readonly Branch[],
  compacted: number,
  checkpointId: string,
): boolean {
  return pathToCheckpoint(transcript, branches, compacted, checkpointId) !== undefined;
}
