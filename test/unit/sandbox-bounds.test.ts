import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bashTool } from '../../activities/tools/bash';
import { withoutHostPaths } from '../../activities/tools/host-paths';
import { Sandbox } from '../../activities/tools/sandbox';
import { workspaceFor } from '../../activities/tools/workspace';
import { parseConfig } from '../../platform/config';

async function sandboxWith(env: Record<string, string>): Promise<{ sandbox: Sandbox; workspace: string }> {
  const dataDir = await mkdtemp(path.join(process.env.KEEL_TEST_DIR ?? os.tmpdir(), 'bounds-'));
  const config = parseConfig({ PATH: process.env.PATH, ...env }, '/');
  const workspace = await workspaceFor(dataDir, 'thread-1');
  return { sandbox: new Sandbox(config.sandbox, config.childEnvironment.PATH), workspace };
}

describe("a file tool's write under the disk bounds (Sandbox.roomFor)", () => {
  it('allows a write that fits the quota and leaves the reserve', async () => {
    const { sandbox, workspace } = await sandboxWith({
      KEEL_SANDBOX_WORKSPACE_MB: '4',
      KEEL_SANDBOX_DISK_RESERVE_MB: '1',
    });
    expect(await sandbox.roomFor(workspace, 1024)).toBeUndefined();
  });

  it('refuses a write that would take the workspace past its quota, saying so', async () => {
    const { sandbox, workspace } = await sandboxWith({
      KEEL_SANDBOX_WORKSPACE_MB: '2',
      KEEL_SANDBOX_DISK_RESERVE_MB: '0',
    });
    await writeFile(path.join(workspace, 'big'), Buffer.alloc(1536 * 1024, 1));
    const refusal = await sandbox.roomFor(workspace, 1024 * 1024);
    expect(refusal).toMatch(/^Not written: the workspace would pass its quota of 2 MiB \(it uses 1 MiB\)/);
    expect(refusal).not.toContain(workspace);
  });

  it('refuses a write once the workspace holds its quota of inodes, though it takes no byte', async () => {
    const { sandbox, workspace } = await sandboxWith({ KEEL_SANDBOX_WORKSPACE_INODES: '20' });
    // The workspace itself and 18 empty files: room for one more.
    for (let index = 0; index < 18; index++) await writeFile(path.join(workspace, `empty-${index}`), '');
    expect(await sandbox.roomFor(workspace, 0)).toBeUndefined();
    await writeFile(path.join(workspace, 'empty-18'), '');
    const refusal = await sandbox.roomFor(workspace, 0);
    expect(refusal).toBe(
      'Not written: the workspace holds 20 files and directories, its quota is 20. Delete files to make room.',
    );
  });

  it('refuses a write that would bring the disk into its reserve', async () => {
    // A reserve larger than any disk here: every write would cross it.
    const { sandbox, workspace } = await sandboxWith({ KEEL_SANDBOX_DISK_RESERVE_MB: String(2 ** 30) });
    expect(await sandbox.roomFor(workspace, 1)).toMatch(
      /^Not written: the disk that holds workspaces is nearly full/,
    );
  });
});

describe('a command on a disk already past the reserve', () => {
  it('runs while free space holds, and is stopped as soon as it falls', async () => {
    const { sandbox, workspace } = await sandboxWith({ KEEL_SANDBOX_DISK_RESERVE_MB: String(2 ** 30) });
    const context = {
      threadId: 'thread-1',
      workspace,
      signal: new AbortController().signal,
      idempotencyKey: 'thread-1:tool-1',
      environment: {},
      sandbox,
      networkHosts: [],
    };
    expect(await bashTool.run({ command: 'echo reads' }, context)).toEqual({
      is_error: false,
      content: 'reads\n',
    });
    const writer = await bashTool.run(
      { command: 'for i in $(seq 200); do head -c 1048576 /dev/zero > f$i; sync f$i; done; echo all' },
      context,
    );
    expect(writer).toMatchObject({
      is_error: true,
      content: expect.stringMatching(
        /^Command stopped by Keel: the disk that holds workspaces was down to \d+ MiB free/,
      ),
    });
  });
});

describe('what the model reads names no host path', () => {
  it.each([
    [
      "EACCES: permission denied, open '/srv/keel/workspaces/t-1/a.txt'",
      '/srv/keel/workspaces/t-1',
      "EACCES: permission denied, open '/workspace/a.txt'",
    ],
    [
      "bwrap: Can't find source path /etc/keel: No such file",
      undefined,
      "bwrap: Can't find source path <host path>: No such file",
    ],
    ['spawn /usr/local/bin/bwrap ENOENT', undefined, 'spawn <host path> ENOENT'],
    ['wrote /workspace/notes.txt and ./rel/path', undefined, 'wrote /workspace/notes.txt and ./rel/path'],
  ])('%s', (text, workspace, shown) => {
    expect(withoutHostPaths(text, workspace)).toBe(shown);
  });
});
