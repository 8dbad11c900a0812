/**
 * A hostile model against the file tools, through the API, on a real worker process (as root
 * here), real bubblewrap and the real Temporal test server. The scripted model turns each line
 * of a message into a parallel tool call (`run:` bash, `read:`, `write:`, `delete:`, `tool:`).
 * A sandboxed racer swaps directories for symlinks (to `/`, to a host directory, to another
 * thread's workspace) while hundreds of file calls go through the swapped names; FIFOs, a
 * device, a socket, 450 MB files and an amplifying edit follow. Nothing outside the workspace is
 * read, written, handed over or deleted, the worker's file-system threads stay free, its memory
 * stays small, and every thread answers its next message.
 */
import { randomUUID } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { maxEditBytes, maxReadChars } from '../../activities/tools/files';
import { createThread, processApiHarness, sendToolLines } from '../helpers/api';
import { exchangeCommand } from '../helpers/exchange-racer';
import { treeSnapshot } from '../helpers/tree-snapshot';

jest.setTimeout(300_000);

/** Sends `lines` as one message and returns each tool call's result in order, and the whole answer. */
const send = (base: string, threadId: string, lines: string[]) => sendToolLines(base, threadId, lines);

const newThread = (base: string) => createThread(base, 'hostile');

async function expectStillAnswers(base: string, threadId: string): Promise<void> {
  const marker = `still-here-${randomUUID()}`;
  const { results } = await send(base, threadId, [`run: echo ${marker}`]);
  expect(results).toEqual([{ content: `${marker}\n`, is_error: false }]);
}

/** The worker's peak resident memory so far, in MiB (`VmHWM`). */
async function peakRssMib(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

describe('a hostile model against the file tools', () => {
  const harness = processApiHarness(() => ({
    KEEL_MODEL: 'scripted:demo',
    KEEL_SANDBOX_TIMEOUT_S: '60',
  }));
  const workspaceOf = (threadId: string) => path.join(harness.config.dataDir, 'workspaces', threadId);

  it('never leaves the workspace while a racer swaps directories for links to /, a host directory and another workspace', async () => {
    const secret = `host-secret-${randomUUID()}`;
    const otherSecret = `other-secret-${randomUUID()}`;
    const shadow = (await readFile('/etc/shadow', 'utf8')).split('\n')[0]!;
    const unique = `keel-escape-${randomUUID()}`;

    // A host directory only root may enter, standing for the data dir's keys.
    const canary = path.join(harness.config.dataDir, 'host-canary');
    await mkdir(canary);
    await chmod(canary, 0o700);
    await writeFile(path.join(canary, 'secret.txt'), secret);
    for (let index = 0; index < 100; index++) await writeFile(path.join(canary, `victim-${index}`), secret);

    const other = await newThread(harness.base);
    await send(harness.base, other, [
      `run: echo ${otherSecret} > note.txt && for i in $(seq 0 99); do echo ${otherSecret} > keep-$i; done`,
    ]);
    const threadId = await newThread(harness.base);
    const setUp = await send(harness.base, threadId, [
      'run: mkdir -p d1/etc d2 d3 && echo inside > d1/etc/shadow && echo inside > d2/secret.txt && echo inside > d3/note.txt' +
        ' && for i in $(seq 0 99); do echo inside > d2/victim-$i; echo inside > d3/keep-$i; done' +
        ` && ln -s / l1 && ln -s ${canary} l2 && ln -s ${workspaceOf(other)} l3 && echo ready`,
    ]);
    expect(setUp.results[0]).toEqual({ content: 'ready\n', is_error: false });

    const before = {
      canary: await treeSnapshot(canary),
      other: await treeSnapshot(workspaceOf(other)),
      root: (await readdir('/')).sort(),
      tmp: (await readdir('/tmp')).filter((name) => name.startsWith(unique)),
    };
    const racers = [1, 2, 3].map((n) => `${exchangeCommand(`d${n}`, `l${n}`, 10)} &`).join(' ');
    const lines = [`run: ${racers} wait`];
    for (let index = 0; index < 100; index++) {
      const at = index % 3;
      if (at === 0) lines.push('read: d1/etc/shadow', `write: d1/${unique}-${index}: written`);
      if (at === 1)
        lines.push('read: d2/secret.txt', `write: d2/new-${index}: pwned`, `delete: d2/victim-${index}`);
      if (at === 2)
        lines.push('read: d3/note.txt', `write: d3/new-${index}: pwned`, `delete: d3/keep-${index}`);
    }
    const { results, body } = await send(harness.base, threadId, lines);
    expect(results[0]!.content).toMatch(/exchanges \d+/);
    const fileResults = results.slice(1);
    for (const text of [body, ...fileResults.map((result) => result.content)]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(otherSecret);
      expect(text).not.toContain(shadow);
    }
    // No host path either (the model's own message, holding the links' targets, aside).
    for (const result of fileResults) expect(result.content).not.toContain(harness.config.dataDir);
    // The race was real: calls met both the directories and the links.
    expect(fileResults.filter((result) => result.content === 'inside\n').length).toBeGreaterThan(0);
    expect(fileResults.filter((result) => /symbolic link/.test(result.content)).length).toBeGreaterThan(0);
    // Nothing outside changed: no file created in / or the host directory, none deleted, none handed over.
    expect(await treeSnapshot(canary)).toEqual(before.canary);
    expect(await treeSnapshot(workspaceOf(other))).toEqual(before.other);
    expect((await readdir('/')).sort()).toEqual(before.root);
    const { results: otherReads } = await send(harness.base, other, ['read: note.txt']);
    expect(otherReads[0]).toEqual({ content: `${otherSecret}\n`, is_error: false });
    await expectStillAnswers(harness.base, threadId);
  });

  it("refuses four FIFOs at once while another thread's write_file and bash answer promptly", async () => {
    const threadId = await newThread(harness.base);
    await send(harness.base, threadId, ['run: mkfifo f1 f2 f3 f4 && echo made']);
    const other = await newThread(harness.base);
    const fifoReads = send(harness.base, threadId, ['read: f1', 'read: f2', 'read: f3', 'read: f4']);
    const started = Date.now();
    const { results: others } = await send(harness.base, other, ['write: ok.txt: fine', 'run: echo alive']);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(others).toEqual([
      { content: 'Wrote 4 characters to ok.txt.', is_error: false },
      { content: 'alive\n', is_error: false },
    ]);
    const { results } = await fifoReads;
    for (const [index, result] of results.entries())
      expect(result).toEqual({ content: `f${index + 1} is a FIFO, not a regular file`, is_error: true });
    await expectStillAnswers(harness.base, threadId);
  });

  it('refuses a device and a socket', async () => {
    const threadId = await newThread(harness.base);
    await send(harness.base, threadId, [
      `run: python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock")' && echo bound`,
    ]);
    // The sandbox cannot make a device; the host can, and the tools must still refuse it.
    execFileSync('mknod', [path.join(workspaceOf(threadId), 'zero'), 'c', '1', '5']);
    const { results } = await send(harness.base, threadId, [
      'read: zero',
      'write: zero: x',
      'read: sock',
      'write: sock: x',
    ]);
    expect(results).toEqual([
      { content: 'zero is a device, not a regular file', is_error: true },
      { content: expect.stringMatching(/^zero is a device/), is_error: true },
      { content: 'sock is a socket', is_error: true },
      { content: 'sock is a socket', is_error: true },
    ]);
    await expectStillAnswers(harness.base, threadId);
  });

  it('reads four 450 MB files at once capped, with their size said, in little worker memory', async () => {
    const threadId = await newThread(harness.base);
    const make = [1, 2, 3, 4]
      .map((n) => `head -c 1000000 /dev/zero | tr "\\0" a > big${n} && truncate -s 450M big${n}`)
      .join(' && ');
    await send(harness.base, threadId, [`run: ${make} && echo made`]);
    const peakBefore = await peakRssMib(harness.worker.pid);
    const { results } = await send(harness.base, threadId, [
      'read: big1',
      'read: big2',
      'read: big3',
      'read: big4',
    ]);
    const peakAfter = await peakRssMib(harness.worker.pid);
    for (const [index, result] of results.entries()) {
      expect(result.is_error).toBe(false);
      expect(result.content).toContain(
        `[… truncated by Keel: showing ${maxReadChars} characters of big${index + 1}, a file of ${450 * 1024 * 1024} bytes; read on with offset and limit]`,
      );
    }
    if (process.env.KEEL_PRINT_FIGURES !== undefined)
      process.stdout.write(`worker peak RSS ${peakBefore.toFixed(0)} → ${peakAfter.toFixed(0)} MiB\n`);
    expect(peakAfter - peakBefore).toBeLessThan(200);
    await expectStillAnswers(harness.base, threadId);
  });

  it('refuses an edit that turns 2 KB of input into 120 MB', async () => {
    const threadId = await newThread(harness.base);
    await send(harness.base, threadId, ['run: head -c 60000 /dev/zero | tr "\\0" a > amp.txt && echo made']);
    const edit = JSON.stringify({
      path: 'amp.txt',
      old_string: 'a',
      new_string: 'b'.repeat(2_000),
      replace_all: true,
    });
    const { results } = await send(harness.base, threadId, [`tool: edit_file ${edit}`]);
    expect(results).toEqual([
      {
        content: `Not edited: replacing 60000 occurrence(s) in amp.txt would make it 120000000 bytes; edit_file writes files of at most ${maxEditBytes} bytes`,
        is_error: true,
      },
    ]);
    expect((await stat(path.join(workspaceOf(threadId), 'amp.txt'))).size).toBe(60_000);
    await expectStillAnswers(harness.base, threadId);
  });
});
