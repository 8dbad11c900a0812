import { mkdir, mkdtemp, realpath, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { WorkspaceViolation } from '../../activities/errors';
import { resolveInWorkspace, workspaceFor } from '../../activities/tools/workspace';

describe('workspace confinement', () => {
  let root: string;
  let workspace: string;
  let outside: string;

  beforeAll(async () => {
    root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'keel-confine-')));
    workspace = await workspaceFor(root, 'thread-1');
    outside = path.join(root, 'outside');
    await mkdir(outside);
    await writeFile(path.join(outside, 'secret.txt'), 'secret');
    await mkdir(path.join(workspace, 'src'));
    await writeFile(path.join(workspace, 'src', 'a.ts'), 'a');
    await symlink(outside, path.join(workspace, 'escape'));
    await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'secret-link'));
    await symlink(path.join(workspace, 'src'), path.join(workspace, 'inner-link'));
    await symlink(path.join(root, 'nowhere'), path.join(workspace, 'dangling'));
    // A sibling whose name starts like the workspace: a string-prefix check would let it through.
    await mkdir(`${workspace}-evil`);
  });

  it.each([
    ['a file inside', 'src/a.ts', 'src/a.ts'],
    ['a file not created yet', 'new/dir/b.txt', 'new/dir/b.txt'],
    ['a path that wanders but stays inside', 'src/../src/a.ts', 'src/a.ts'],
    ['a symlink that points inside', 'inner-link/a.ts', 'src/a.ts'],
    ['the workspace itself', '.', ''],
  ])('allows %s', async (_name, requested, expected) => {
    expect(await resolveInWorkspace(workspace, requested)).toBe(path.join(workspace, expected));
  });

  it.each([
    ['a parent path', '../outside/secret.txt'],
    ['a deeper parent path', 'src/../../outside'],
    ['an absolute path', '/etc/passwd'],
    ['an absolute path into the workspace', '/tmp/x'],
    ['a symlinked directory out of the workspace', 'escape/secret.txt'],
    ['a symlinked file out of the workspace', 'secret-link'],
    ['a new file under a symlink out of the workspace', 'escape/new.txt'],
    ['a broken symlink', 'dangling'],
    ['a sibling sharing the name prefix', '../thread-1-evil/x'],
    ['a NUL byte', 'src/a.ts\0.png'],
  ])('refuses %s', async (_name, requested) => {
    await expect(resolveInWorkspace(workspace, requested)).rejects.toBeInstanceOf(WorkspaceViolation);
  });

  it('refuses a thread id that could escape the data dir', async () => {
    await expect(workspaceFor(root, '../x')).rejects.toBeInstanceOf(WorkspaceViolation);
  });
});
