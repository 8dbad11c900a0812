/**
 * The file tools' confinement, tool by tool, on a real file system: every path is walked from a
 * descriptor of the workspace without following links, so links, `..`, FIFOs, devices, sockets,
 * hard links and a directory swapped for a symlink thousands of times a second are all refused
 * or harmless, and every size is bounded.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  chmod,
  link,
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  realpath,
  stat,
  symlink,
  truncate,
  writeFile,
} from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { WorkspaceViolation } from '../../activities/errors';
import { segmentsOf } from '../../activities/tools/beneath';
import {
  deleteFileTool,
  editFileTool,
  listFilesTool,
  maxEditBytes,
  maxListedEntries,
  maxReadChars,
  readFileTool,
  writeFileTool,
} from '../../activities/tools/files';
import type { ToolContext } from '../../activities/tools/registry';
import { Sandbox } from '../../activities/tools/sandbox';
import { workspaceFor } from '../../activities/tools/workspace';
import { parseConfig } from '../../platform/config';
import { limits } from '../../common/limits';
import { startExchanging } from '../helpers/exchange-racer';
import { treeSnapshot } from '../helpers/tree-snapshot';

jest.setTimeout(60_000);

const config = parseConfig({ PATH: process.env.PATH }, '/');
const sandbox = new Sandbox(config.sandbox, config.childEnvironment.PATH);

function contextOf(workspace: string): ToolContext {
  return {
    threadId: path.basename(workspace),
    workspace,
    signal: new AbortController().signal,
    idempotencyKey: 'key',
    environment: {},
    sandbox,
    networkHosts: [],
  };
}

describe('file tools confined by descriptors', () => {
  let root: string;
  let workspace: string;
  let outside: string;
  let context: ToolContext;
  const secret = `secret-${randomUUID()}`;

  beforeAll(async () => {
    root = await realpath(
      await mkdtemp(path.join(process.env.KEEL_TEST_DIR ?? os.tmpdir(), 'keel-confine-')),
    );
    workspace = await workspaceFor(root, 'thread-1');
    context = contextOf(workspace);
    outside = path.join(root, 'outside');
    await mkdir(outside);
    await writeFile(path.join(outside, 'secret.txt'), secret);
    await mkdir(path.join(workspace, 'src'));
    await writeFile(path.join(workspace, 'src', 'a.ts'), 'a\nb\nc\n');
    await symlink(outside, path.join(workspace, 'escape'));
    await symlink(path.join(outside, 'secret.txt'), path.join(workspace, 'secret-link'));
    await symlink(path.join(workspace, 'src'), path.join(workspace, 'inner-link'));
    await symlink(path.join(root, 'nowhere'), path.join(workspace, 'dangling'));
  });

  it.each([
    ['a plain path', 'src/a.ts', ['src', 'a.ts']],
    ['dots and doubled slashes', './src//a.ts', ['src', 'a.ts']],
    ['the workspace itself', '.', []],
  ])('splits %s into components', (_name, requested, expected) => {
    expect(segmentsOf(requested)).toEqual(expected);
  });

  it.each([
    ['a parent path', '../outside/secret.txt'],
    ['a parent path that comes back', 'src/../src/a.ts'],
    ['an absolute path', '/etc/passwd'],
    ['a NUL byte', 'src/a.ts\0.png'],
  ])('refuses %s before touching the disk', (_name, requested) => {
    expect(() => segmentsOf(requested)).toThrow(WorkspaceViolation);
  });

  it('reads a file, a window of its lines, and lists a directory', async () => {
    expect(await readFileTool.run({ path: 'src/a.ts' }, context)).toEqual({
      is_error: false,
      content: 'a\nb\nc\n',
    });
    expect(await readFileTool.run({ path: 'src/a.ts', offset: 1, limit: 1 }, context)).toEqual({
      is_error: false,
      content: 'b',
    });
    expect(await listFilesTool.run({ path: 'src' }, context)).toEqual({
      is_error: false,
      content: 'src/a.ts',
    });
  });

  it.each([
    ['a symlinked directory out of the workspace', 'escape/secret.txt'],
    ['a symlinked file out of the workspace', 'secret-link'],
    ['a symlink that points inside', 'inner-link/a.ts'],
    ['a broken symlink', 'dangling'],
  ])('refuses to read through %s, saying only the workspace path', async (_name, requested) => {
    const result = await readFileTool.run({ path: requested }, context);
    expect(result.is_error).toBe(true);
    expect(result.content).toMatch(/symbolic link/);
    expect(result.content).not.toContain(root);
    expect(result.content).not.toContain(secret);
  });

  it('writes, edits and deletes nothing through a link, and leaves the outside as it was', async () => {
    const before = await treeSnapshot(outside);
    for (const result of [
      await writeFileTool.run({ path: 'escape/new.txt', content: 'x' }, context),
      await writeFileTool.run({ path: 'secret-link', content: 'x' }, context),
      await writeFileTool.run({ path: 'dangling', content: 'x' }, context),
      await editFileTool.run({ path: 'secret-link', old_string: 'secret', new_string: 'x' }, context),
      await deleteFileTool.run({ path: 'escape/secret.txt' }, context),
      await listFilesTool.run({ path: 'escape' }, context),
    ]) {
      expect(result.is_error).toBe(true);
      expect(result.content).not.toContain(root);
    }
    // Deleting the link itself is a change inside the workspace, and leaves its target be.
    expect(await deleteFileTool.run({ path: 'dangling' }, context)).toEqual({
      is_error: false,
      content: 'Deleted dangling.',
    });
    expect(await treeSnapshot(outside)).toEqual(before);
  });

  it('hands what write_file creates to the sandbox uid by descriptor', async () => {
    expect(await writeFileTool.run({ path: 'made/deep/x.txt', content: 'hi' }, context)).toEqual({
      is_error: false,
      content: 'Wrote 2 characters to made/deep/x.txt.',
    });
    const uid = await sandbox.hostUidFor(workspace);
    if (uid === undefined) return;
    for (const made of ['made', 'made/deep', 'made/deep/x.txt'])
      expect((await stat(path.join(workspace, made))).uid).toBe(uid);
  });

  it('refuses FIFOs at once, for reading and writing, without blocking', async () => {
    execFileSync('mkfifo', [path.join(workspace, 'pipe')]);
    const started = Date.now();
    const results = await Promise.all([
      ...Array.from({ length: 8 }, () => readFileTool.run({ path: 'pipe' }, context)),
      writeFileTool.run({ path: 'pipe', content: 'x' }, context),
      editFileTool.run({ path: 'pipe', old_string: 'a', new_string: 'b' }, context),
    ]);
    expect(Date.now() - started).toBeLessThan(5_000);
    for (const result of results)
      expect(result).toEqual({ is_error: true, content: expect.stringMatching(/^pipe is a FIFO/) });
  });

  it('refuses a device and a socket', async () => {
    execFileSync('mknod', [path.join(workspace, 'zero'), 'c', '1', '5']);
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(path.join(workspace, 'socket'), resolve));
    try {
      expect(await readFileTool.run({ path: 'zero' }, context)).toEqual({
        is_error: true,
        content: 'zero is a device, not a regular file',
      });
      expect(await writeFileTool.run({ path: 'zero', content: 'x' }, context)).toMatchObject({
        is_error: true,
      });
      expect(await readFileTool.run({ path: 'socket' }, context)).toEqual({
        is_error: true,
        content: 'socket is a socket',
      });
    } finally {
      server.close();
    }
  });

  it('never writes through a hard link', async () => {
    await writeFile(path.join(root, 'linked.txt'), secret);
    await link(path.join(root, 'linked.txt'), path.join(workspace, 'hard'));
    const result = await writeFileTool.run({ path: 'hard', content: 'overwritten' }, context);
    expect(result).toEqual({ is_error: true, content: expect.stringMatching(/^hard has other hard links/) });
    expect(await readFile(path.join(root, 'linked.txt'), 'utf8')).toBe(secret);
    expect((await stat(path.join(root, 'linked.txt'))).uid).toBe(process.getuid?.());
  });

  it('reads at most the cap of a large sparse file, says so with the full size, and reads on by lines', async () => {
    const big = path.join(workspace, 'big.txt');
    await writeFile(big, `${'x'.repeat(limits.toolOutputChars + 10)}\nsecond\n${'y'.repeat(100_000)}\n`);
    await truncate(big, 300 * 1024 * 1024);
    const whole = await readFileTool.run({ path: 'big.txt' }, context);
    expect(whole.content.length).toBeLessThanOrEqual(limits.toolResultChars);
    expect(whole.content).toMatch(
      new RegExp(
        `truncated by Keel: showing ${maxReadChars} characters of big.txt, a file of 314572800 bytes`,
      ),
    );
    expect(await readFileTool.run({ path: 'big.txt', offset: 1, limit: 1 }, context)).toEqual({
      is_error: false,
      content: 'second',
    });
    // The sparse tail reads as NUL bytes: a binary file, found once the read reaches it.
    expect(await readFileTool.run({ path: 'big.txt', offset: 3 }, context)).toEqual({
      is_error: true,
      content: 'big.txt is a binary file',
    });
  });

  it('refuses an edit that would amplify a small input into a large file, and one of a large file', async () => {
    await writeFile(path.join(workspace, 'amp.txt'), 'a'.repeat(60_000));
    const amplified = await editFileTool.run(
      { path: 'amp.txt', old_string: 'a', new_string: 'b'.repeat(2_000), replace_all: true },
      context,
    );
    expect(amplified).toEqual({
      is_error: true,
      content: `Not edited: replacing 60000 occurrence(s) in amp.txt would make it 120000000 bytes; edit_file writes files of at most ${maxEditBytes} bytes`,
    });
    expect((await stat(path.join(workspace, 'amp.txt'))).size).toBe(60_000);
    await truncate(path.join(workspace, 'amp.txt'), maxEditBytes + 1);
    expect(
      await editFileTool.run({ path: 'amp.txt', old_string: 'a', new_string: 'b' }, context),
    ).toMatchObject({
      is_error: true,
      content: expect.stringMatching(/^amp.txt is 4194305 bytes; edit_file edits files of at most/),
    });
    expect(await editFileTool.run({ path: 'src/a.ts', old_string: 'b', new_string: 'B' }, context)).toEqual({
      is_error: false,
      content: 'Replaced 1 occurrence(s) in src/a.ts.',
    });
    expect(await readFile(path.join(workspace, 'src/a.ts'), 'utf8')).toBe('a\nB\nc\n');
  });

  it('lists at most its bound of entries, recursively, never through a link', async () => {
    const many = path.join(workspace, 'many');
    await mkdir(many);
    await Promise.all(
      Array.from({ length: maxListedEntries + 5 }, (_, index) => writeFile(path.join(many, `f${index}`), '')),
    );
    const listed = await listFilesTool.run({ path: '.', recursive: true }, context);
    const lines = listed.content.split('\n');
    expect(lines).toHaveLength(maxListedEntries + 1);
    expect(lines.at(-1)).toBe(`[… listing stopped by Keel at ${maxListedEntries} entries]`);
    const top = await listFilesTool.run({ recursive: true, path: 'src' }, context);
    expect(top.content).toBe('src/a.ts');
    const links = await listFilesTool.run({}, context);
    expect(links.content.split('\n')).toEqual(expect.arrayContaining(['escape', 'inner-link', 'src/']));
    expect(links.content).not.toContain('secret.txt');
  });

  it('deletes a file and an empty directory, refuses a full one and the workspace', async () => {
    await mkdir(path.join(workspace, 'empty'));
    expect(await deleteFileTool.run({ path: 'empty' }, context)).toEqual({
      is_error: false,
      content: 'Deleted empty.',
    });
    expect(await deleteFileTool.run({ path: 'src' }, context)).toEqual({
      is_error: true,
      content: 'src is a directory that is not empty',
    });
    expect(await deleteFileTool.run({ path: '.' }, context)).toMatchObject({ is_error: true });
    expect(await deleteFileTool.run({ path: 'nope' }, context)).toEqual({
      is_error: true,
      content: 'nope does not exist',
    });
  });

  it('stays inside while a racer swaps a directory for a symlink out, hundreds of calls at once', async () => {
    const raced = await workspaceFor(root, 'thread-raced');
    const racedContext = contextOf(raced);
    const canary = path.join(root, 'canary');
    await mkdir(canary);
    await chmod(canary, 0o700);
    for (let index = 0; index < 50; index += 1) await writeFile(path.join(canary, `victim-${index}`), secret);
    await writeFile(path.join(canary, 'secret.txt'), secret);
    await mkdir(path.join(raced, 'd'));
    await writeFile(path.join(raced, 'd', 'secret.txt'), 'inside');
    for (let index = 0; index < 50; index += 1)
      await writeFile(path.join(raced, 'd', `victim-${index}`), 'inside');
    await symlink(canary, path.join(raced, 'l'));
    const before = await treeSnapshot(canary);
    // The workspace is handed over to its uid on its first call (decision 0325), before the racer
    // starts: this test races the file tools, not that one-time `chown -R` (which a tree changing
    // under it fails, and the call with it).
    expect(await readFileTool.run({ path: 'd/secret.txt' }, racedContext)).toMatchObject({
      content: 'inside',
    });
    const racer = startExchanging(path.join(raced, 'd'), path.join(raced, 'l'));
    try {
      // Until the racer has swapped at least once: then every round races it.
      while (!(await lstat(path.join(raced, 'd'))).isSymbolicLink())
        await new Promise((resolve) => setTimeout(resolve, 10));
      const results = [];
      // Rounds of 300 calls at once, until some met the directory and some the link.
      for (let round = 0; round < 20; round += 1) {
        results.push(
          ...(await Promise.all(
            Array.from({ length: 300 }, (_, index) => {
              const at = index % 3;
              if (at === 0) return readFileTool.run({ path: 'd/secret.txt' }, racedContext);
              if (at === 1)
                return writeFileTool.run(
                  { path: `d/new-${round}-${index}`, content: 'written' },
                  racedContext,
                );
              return deleteFileTool.run({ path: `d/victim-${((index - 2) / 3) % 50}` }, racedContext);
            }),
          )),
        );
        const metDirectory = results.some((result) => result.content === 'inside');
        const metLink = results.some((result) => result.is_error && /symbolic link/.test(result.content));
        if (metDirectory && metLink) break;
      }
      for (const result of results) {
        expect(result.content).not.toContain(secret);
        expect(result.content).not.toContain(root);
      }
      // The race was real: some calls met the symlink, others the directory.
      expect(results.some((result) => result.content === 'inside')).toBe(true);
      expect(results.some((result) => result.is_error && /symbolic link/.test(result.content))).toBe(true);
    } finally {
      racer.kill('SIGKILL');
    }
    expect(await treeSnapshot(canary)).toEqual(before);
  });
});
