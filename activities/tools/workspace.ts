/**
 * The conversation's workspace directory. What a tool may reach inside it is the kernel's to
 * enforce: bash runs in the sandbox, the file tools walk descriptors beneath it (./beneath.ts).
 */
import { mkdir, realpath } from 'node:fs/promises';
import path from 'node:path';
import { idPattern } from '../../common/limits';
import { workspaceNameOf } from '../../common/thread';
import { WorkspaceViolation } from '../errors';

/**
 * The workspace directory of a thread under `workspacesDir` (`KEEL_WORKSPACES_DIR`, shared by the
 * worker hosts of a cluster), created on first use: `<thread_id>`, or `<thread_id>~<scope>` for a
 * thread whose id is scoped to its owner (decision 0160).
 */
export async function workspaceFor(workspacesDir: string, threadId: string, scope?: string): Promise<string> {
  if (!idPattern.test(threadId)) throw new WorkspaceViolation(threadId, 'is not a valid thread id');
  if (scope !== undefined && !/^[0-9a-f]{1,64}$/.test(scope))
    throw new WorkspaceViolation(scope, 'is not a valid owner scope');
  const directory = path.join(workspacesDir, workspaceNameOf(threadId, scope));
  await mkdir(directory, { recursive: true });
  return realpath(directory);
}
