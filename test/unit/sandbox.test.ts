import { existsSync } from 'node:fs';
import { lchown, lstat, mkdir, mkdtemp, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bashTool, describeSandbox } from '../../activities/tools/bash';
import { commandRunnerPid } from '../../activities/tools/command-runner';
import { writeFileTool } from '../../activities/tools/files';
import type { ToolContext } from '../../activities/tools/registry';
import { Sandbox, sandboxWorkspace } from '../../activities/tools/sandbox';
import { workspaceFor } from '../../activities/tools/workspace';
import { parseConfig } from '../../platform/config';

jest.setTimeout(60_000);

async function contextFor(env: Record<string, string> = {}, threadId = 'thread-1'): Promise<ToolContext> {
  const dataDir = await mkdtemp(path.join(process.env.KEEL_TEST_DIR ?? os.tmpdir(), 'sandbox-'));
  const config = parseConfig({ PATH: process.env.PATH, ...env }, '/');
  const workspace = await workspaceFor(dataDir, threadId);
  return {
    threadId,
    workspace,
    signal: new AbortController().signal,
    idempotencyKey: `${threadId}:tool-1`,
    environment: config.childEnvironment,
    sandbox: new Sandbox(config.sandbox, config.childEnvironment.PATH),
    networkHosts: [],
  };
}

/** Host pids of the processes whose environment has `name=value` (a thread's commands). */
async function processesWith(name: string, value: string): Promise<number[]> {
  const found: number[] = [];
  for (const pid of (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry))) {
    const environ = await readFile(`/proc/${pid}/environ`, 'latin1').catch(() => '');
    if (environ.split('\0').includes(`${name}=${value}`)) found.push(Number(pid));
  }
  return found;
}

/** The process group of `pid`, from /proc. */
async function processGroupOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

/** The command runner(s) this process started (./command-runner.ts): `node -e …` children. */
/**
 * This module's command runner: its process id, checked to be a `node -e` child of this process.
 * (Other runners may be children too: Jest loads the module afresh for each test file it runs in
 * this process, and each copy has its own runner.)
 */
async function commandRunner(): Promise<number | undefined> {
  const pid = commandRunnerPid();
  if (pid === undefined) return undefined;
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  return parent === process.pid && cmdline.startsWith(`${process.execPath}\0-e\0`) ? pid : undefined;
}

async function eventually(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (const started = Date.now(); Date.now() - started < 20_000;)
    if (await check()) return;
    else await new Promise((resolve) => setTimeout(resolve, 50));
  throw new Error(`timed out waiting for ${what}`);
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

  (process.getuid?.() === 0 ? it : it.skip)(
    'hands a workspace of the old shared uid to its own, without following a link out of it (root)',
    async () => {
      const context = await contextFor({}, `old-${process.pid}-${Date.now()}`);
      const outside = path.join(path.dirname(context.workspace), 'outside.txt');
      await writeFile(outside, 'host\n');
      await mkdir(path.join(context.workspace, 'dir'), { mode: 0o700 });
      await writeFile(path.join(context.workspace, 'dir', 'notes.txt'), 'one\n');
      await symlink(outside, path.join(context.workspace, 'link'));
      // As a worker before decision 0325 left it: everything the shared uid's.
      for (const file of ['dir/notes.txt', 'dir', 'link', '.'])
        await lchown(path.join(context.workspace, file), 65534, 65534);
      const uid = await context.sandbox.hostUidFor(context.workspace);
      expect(uid).toBeGreaterThanOrEqual(100_000);
      expect(uid).toBeLessThan(165_536);
      const result = await bashTool.run(
        { command: 'echo two >> dir/notes.txt && cat dir/notes.txt && id -u' },
        context,
      );
      expect(result).toEqual({ is_error: false, content: `one\ntwo\n${uid}\n` });
      for (const file of ['dir/notes.txt', 'dir', 'link', '.'])
        expect((await lstat(path.join(context.workspace, file))).uid).toBe(uid);
      expect((await lstat(outside)).uid).toBe(0);
    },
  );

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

  it.each([
    ['on', {}],
    ['off', { KEEL_SANDBOX: 'off' }],
  ])(
    'hands a command (sandbox %s) no socket but its own output: the runner keeps its channel',
    async (_, env) => {
      const context = await contextFor(env);
      const result = await bashTool.run(
        { command: 'for fd in /proc/$$/fd/*; do echo "${fd##*/} $(readlink "$fd")"; done' },
        context,
      );
      expect(result.is_error).toBe(false);
      const sockets = result.content
        .split('\n')
        .filter((line) => line.includes('socket:'))
        .map((line) => line.split(' ')[0]);
      expect(sockets).toEqual(['1', '2']);
    },
  );

  it('stops a cancelled command with everything it started', async () => {
    const threadId = `cancelled-${process.pid}-${Date.now()}`;
    const controller = new AbortController();
    const context = { ...(await contextFor({}, threadId)), signal: controller.signal };
    const running = bashTool.run({ command: '(sleep 300 &); echo started > started; sleep 300' }, context);
    await eventually(() => existsSync(path.join(context.workspace, 'started')), 'the command to start');
    expect(await processesWith('KEEL_THREAD_ID', threadId)).not.toEqual([]);
    controller.abort(new Error('cancelled by the test'));
    await expect(running).rejects.toThrow('cancelled by the test');
    await eventually(
      async () => (await processesWith('KEEL_THREAD_ID', threadId)).length === 0,
      'the cancelled command to die',
    );
  });

  it('fails a command whose runner died, takes its sandbox down with it, and starts a new runner', async () => {
    const threadId = `orphaned-${process.pid}-${Date.now()}`;
    const context = await contextFor({}, threadId);
    expect(await bashTool.run({ command: 'echo first' }, context)).toEqual({
      is_error: false,
      content: 'first\n',
    });
    const runner = await commandRunner();
    expect(runner).toBeDefined();
    // Signals to the worker's process group (a Ctrl-C) are the worker's to handle, not the runner's.
    expect(await processGroupOf(runner!)).not.toBe(await processGroupOf(process.pid));
    const running = bashTool.run({ command: '(sleep 300 &); echo started > started; sleep 300' }, context);
    await eventually(() => existsSync(path.join(context.workspace, 'started')), 'the command to start');
    process.kill(runner!, 'SIGKILL');
    await expect(running).rejects.toThrow(/command runner exited/);
    await eventually(
      async () => (await processesWith('KEEL_THREAD_ID', threadId)).length === 0,
      'the sandbox to die with its runner',
    );
    expect(await bashTool.run({ command: 'echo again' }, context)).toEqual({
      is_error: false,
      content: 'again\n',
    });
    const next = await commandRunner();
    expect(next).toBeDefined();
    expect(next).not.toBe(runner);
  });
});
