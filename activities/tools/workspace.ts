/**
 * Confinement: every path a tool touches resolves, symlinks and all, inside the conversation's
 * workspace. Checked with realpath and path.relative, never with string prefixes.
 */
import { lstat, mkdir, realpath } from 'node:fs/promises';
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

function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return (
    relative === '' ||
    (!relative.startsWith(`..${path.sep}`) && relative !== '..' && !path.isAbsolute(relative))
  );
}

async function exists(target: string): Promise<boolean> {
  try {
    await lstat(target);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves `requested` inside `workspace` (already a realpath). The deepest part of the path
 * that exists is resolved with realpath, so a symlink anywhere along it that points outside is
 * refused; the parts that do not exist yet are appended to it.
 */
export async function resolveInWorkspace(workspace: string, requested: string): Promise<string> {
  if (requested.includes('\0')) throw new WorkspaceViolation(requested, 'contains a NUL byte');
  if (path.isAbsolute(requested)) throw new WorkspaceViolation(requested, 'is absolute');
  const candidate = path.resolve(workspace, requested);
  if (!isInside(workspace, candidate)) throw new WorkspaceViolation(requested, 'leaves the workspace');
  let existing = candidate;
  const missing: string[] = [];
  while (!(await exists(existing))) {
    missing.unshift(path.basename(existing));
    existing = path.dirname(existing);
  }
  let real: string;
  try {
    real = await realpath(existing);
  } catch {
    throw new WorkspaceViolation(requested, 'goes through a broken symlink');
  }
  if (!isInside(workspace, real))
    throw new WorkspaceViolation(requested, 'resolves outside the workspace through a symlink');
  return path.join(real, ...missing);
}

/** The path as the model should see it: relative to the workspace. */
export function displayPath(workspace: string, absolute: string): string {
  return path.relative(workspace, absolute) || '.';
}
