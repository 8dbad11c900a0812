import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bashTool, describeSandbox } from '../../activities/tools/bash';
import { writeFileTool } from '../../activities/tools/files';
import type { ToolContext } from '../../activities/tools/registry';
import { Sandbox, sandboxWorkspace } from '../../activities/tools/sandbox';
import { workspaceFor } from '../../activities/tools/workspace';
import { parseConfig } from '../../common/config';

async function contextFor(env: Record<string, string> = {}): Promise<ToolContext> {
  const dataDir = await mkdtemp(path.join(process.env.KEEL_TEST_DIR ?? os.tmpdir(), 'sandbox-'));
  const config = parseConfig({ PATH: process.env.PATH, ...env }, '/');
  return {
    threadId: 'thread-1',
    workspace: await workspaceFor(dataDir, 'thread-1'),
    signal: new AbortController().signal,
    idempotencyKey: 'thread-1:tool-1',
    environment: config.childEnvironment,
    sandbox: new Sandbox(config.sandbox, config.childEnvironment.PATH),
    networkHosts: [],
  };
}

describe('the bash sandbox', () => {
  it('runs a command in the workspace at /workspace, and its files land in the thread workspace', async () => {
    const context = await contextFor();
    const result = await bashTool.run({ command: 'pwd; echo made > made.txt; id -un' }, context);
    expect(result).toEqual({ is_error: false, content: `${sandboxWorkspace}\nkeel\n` });
    expect(await readFile(path.join(context.workspace, 'made.txt'), 'utf8')).toBe('made\n');
  });

  it('lets a command change what the file tools wrote (a root worker hands files to the sandbox uid)', async () => {
    const context = await contextFor();
    await writeFileTool.run({ path: 'dir/notes.txt', content: 'one\n' }, context);
    const result = await bashTool.run(
      { command: 'echo two >> dir/notes.txt && touch dir/new && cat dir/notes.txt' },
      context,
    );
    expect(result).toEqual({ is_error: false, content: 'one\ntwo\n' });
  });

  it('answers in-band and runs nothing when bubblewrap cannot be found, and says how to fix it', async () => {
    const context = await contextFor({ PATH: '/nonexistent' });
    const result = await bashTool.run({ command: 'echo ran > ran.txt' }, context);
    expect(result.is_error).toBe(true);
    expect(result.content).toMatch(/^Not run: commands run in a sandbox, and this worker cannot create one/);
    expect(result.content).toMatch(/bubblewrap \(bwrap\) is not installed/);
    expect(result.content).toMatch(/apt-get install bubblewrap/);
    expect(result.content).toMatch(/KEEL_SANDBOX=off/);
    const state = await describeSandbox(context.sandbox, 'off');
    expect(state).toMatchObject({
      ok: false,
      line: expect.stringMatching(/cannot be created on this machine/),
    });
    expect(existsSync(path.join(context.workspace, 'ran.txt'))).toBe(false);
  });

  it('runs unconfined only when the operator says KEEL_SANDBOX=off, and warns about it', async () => {
    const context = await contextFor({ KEEL_SANDBOX: 'off' });
    expect(await bashTool.run({ command: 'pwd' }, context)).toEqual({
      is_error: false,
      content: `${context.workspace}\n`,
    });
    expect(await describeSandbox(context.sandbox, 'off')).toMatchObject({
      ok: false,
      line: expect.stringMatching(/^WARNING: KEEL_SANDBOX=off/),
    });
  });

  it('reaches the network only when KEEL_SANDBOX_NETWORK=on', async () => {
    const closed = await contextFor();
    expect(await bashTool.run({ command: 'cat /proc/net/dev | grep -c :' }, closed)).toEqual({
      is_error: false,
      content: '1\n',
    });
    const open = await contextFor({ KEEL_SANDBOX_NETWORK: 'on' });
    const interfaces = await bashTool.run({ command: 'cat /proc/net/dev | grep -c :' }, open);
    expect(Number(interfaces.content)).toBe((await readFile('/proc/net/dev', 'utf8')).split(':').length - 1);
  });
});
