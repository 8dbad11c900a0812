/**
 * What `/proc/self/mountinfo` shows of the workspace inside the sandbox (issue 29, decision 0541).
 * The kernel prints a bind mount's root as its path within the filesystem that holds it, and no
 * namespace or option of bubblewrap changes that: a workspace directory on the host's disk shows
 * its host path; workspaces on a filesystem of their own show only `/<workspace name>`.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bashTool } from '../../activities/tools/bash';
import { stopCommandRunner } from '../../activities/tools/command-runner';
import type { ToolContext } from '../../activities/tools/registry';
import { Sandbox } from '../../activities/tools/sandbox';
import { workspaceFor } from '../../activities/tools/workspace';
import { parseConfig } from '../../platform/config';
import { smallFilesystem } from '../helpers/small-filesystem';

jest.setTimeout(60_000);

const root = process.getuid?.() === 0;
const config = parseConfig({ PATH: process.env.PATH }, '/');
const sandbox = new Sandbox(config.sandbox, config.childEnvironment.PATH);

/** The mountinfo line of `/workspace`, as a command in the sandbox of `workspace` reads it. */
async function workspaceMount(workspace: string): Promise<{ root: string; all: string }> {
  const context: ToolContext = {
    threadId: path.basename(workspace),
    workspace,
    signal: new AbortController().signal,
    idempotencyKey: 'mountinfo:tool-1',
    environment: config.childEnvironment,
    sandbox,
    networkHosts: [],
  };
  const result = await bashTool.run({ command: 'cat /proc/self/mountinfo' }, context);
  expect(result.is_error).toBe(false);
  const all = String(result.content);
  // Fields: id, parent, device, root, mount point, …
  const line = all.split('\n').find((fields) => fields.split(' ')[4] === '/workspace');
  return { root: line!.split(' ')[3]!, all };
}

/** Where `directory` lies within its filesystem: its path below that filesystem's mount point (the host's mountinfo). */
async function pathWithinFilesystem(directory: string): Promise<string> {
  const mounts = (await readFile('/proc/self/mountinfo', 'utf8')).split('\n').map((line) => line.split(' '));
  const holder = mounts
    .filter(
      (fields) =>
        fields[4] !== undefined && (directory + '/').startsWith(fields[4] === '/' ? '/' : `${fields[4]}/`),
    )
    .sort((a, b) => b[4]!.length - a[4]!.length)[0]!;
  const below = path.relative(holder[4]!, directory);
  return path.join(holder[3]!, below);
}

afterAll(() => stopCommandRunner());

describe("the workspace's mount inside the sandbox", () => {
  it('shows the host path of a workspace that lies on a host directory', async () => {
    const workspaces = await mkdtemp(path.join(os.tmpdir(), 'keel-mountinfo-'));
    const workspace = await workspaceFor(workspaces, 'thread-on-the-host');
    const { root: shown } = await workspaceMount(workspace);
    expect(shown).toBe(await pathWithinFilesystem(workspace));
    expect(shown).toContain(path.basename(workspaces));
  });

  (root ? it : it.skip)(
    'shows only the workspace name when the workspaces are a filesystem of their own',
    async () => {
      const disk = smallFilesystem(16, 1_000);
      try {
        const workspace = await workspaceFor(disk.directory, 'thread-on-its-own-filesystem');
        const { root: shown, all } = await workspaceMount(workspace);
        expect(shown).toBe('/thread-on-its-own-filesystem');
        expect(all).not.toContain(path.basename(disk.directory));
      } finally {
        disk.unmount();
      }
    },
  );
});
