/**
 * A deleted thread's workspace reclaimed (issue 29, decision 0542), with real bubblewrap: under a
 * root worker its still-running commands are killed, its files deleted — a read-only directory
 * included — and its uid given to the next workspace, which inherits no process and no file.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bashTool } from '../../activities/tools/bash';
import { stopCommandRunner } from '../../activities/tools/command-runner';
import type { ToolContext } from '../../activities/tools/registry';
import { Sandbox } from '../../activities/tools/sandbox';
import { workspaceFor } from '../../activities/tools/workspace';
import { parseConfig } from '../../platform/config';

jest.setTimeout(60_000);

const root = process.getuid?.() === 0;
const uidBase = 720_000;
const config = parseConfig(
  { PATH: process.env.PATH, KEEL_SANDBOX_UID_BASE: String(uidBase), KEEL_SANDBOX_UID_COUNT: '1' },
  '/',
);
const sandbox = new Sandbox(config.sandbox, config.childEnvironment.PATH);

function contextOf(workspace: string): ToolContext {
  return {
    threadId: path.basename(workspace),
    workspace,
    signal: new AbortController().signal,
    idempotencyKey: `${path.basename(workspace)}:tool-1`,
    environment: config.childEnvironment,
    sandbox,
    networkHosts: [],
  };
}

/** Host pids whose real uid is `uid`. */
async function processesOf(uid: number): Promise<number[]> {
  const found: number[] = [];
  for (const pid of (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry))) {
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    if (/^Uid:\s+(\d+)/m.exec(status)?.[1] === String(uid)) found.push(Number(pid));
  }
  return found;
}

afterAll(() => stopCommandRunner());

(root ? describe : describe.skip)("a deleted thread's workspace", () => {
  it('is deleted with its running commands, and its uid goes to the next workspace with nothing of the old', async () => {
    const workspaces = await mkdtemp(path.join(os.tmpdir(), 'keel-reclaim-'));
    const deleted = await workspaceFor(workspaces, 'deleted-thread');
    // The range holds one uid: the next workspace can have it only once it is freed.
    const running = bashTool.run(
      {
        command:
          'mkdir -p locked/inner && echo x > locked/inner/f && chmod 500 locked && touch started && sleep 50',
      },
      contextOf(deleted),
    );
    // Awaited below; should the test fail before, the runner's stop in afterAll rejects it.
    running.catch(() => undefined);
    for (const started = Date.now(); !existsSync(path.join(deleted, 'started'));)
      if (Date.now() - started > 20_000) throw new Error('the command never started');
      else await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await processesOf(uidBase)).not.toEqual([]);
    const next = await workspaceFor(workspaces, 'next-thread');
    await expect(bashTool.run({ command: 'true' }, contextOf(next))).rejects.toThrow(
      /no sandbox uid is free/,
    );

    const startedAt = Date.now();
    expect(await sandbox.reclaim(deleted)).toBe(uidBase);
    expect(existsSync(deleted)).toBe(false);
    expect((await running).is_error).toBe(true);
    expect(Date.now() - startedAt).toBeLessThan(20_000);
    expect(await processesOf(uidBase)).toEqual([]);

    expect(await bashTool.run({ command: 'id -u; ls -A' }, contextOf(next))).toEqual({
      is_error: false,
      content: `${uidBase}\n`,
    });
    expect(statSync(next).uid).toBe(uidBase);
    // Nothing on the host is the uid's but the new workspace itself.
    const owned = execFileSync('find', [workspaces, '-uid', String(uidBase)], { encoding: 'utf8' });
    expect(owned.trim().split('\n')).toEqual([next]);
  });
});
