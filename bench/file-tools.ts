/**
 * What confinement costs a file tool, and what bounded reads save (decision 0320). Run as root on
 * a machine with bubblewrap: `npx tsx bench/file-tools.ts`. Three ways to read one small file three
 * directories deep: the descriptor walk (read_file now), the realpath check then open by name it
 * replaced (racy), and one bubblewrap sandbox per operation (`cat`, the other design); then the
 * worker's peak memory reading four 450 MB files at once, bounded and whole.
 */
import { mkdir, mkdtemp, readFile, realpath, stat, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bashTool } from '../activities/tools/bash';
import { readFileTool } from '../activities/tools/files';
import type { ToolContext } from '../activities/tools/registry';
import { Sandbox } from '../activities/tools/sandbox';
import { workspaceFor } from '../activities/tools/workspace';
import { parseConfig } from '../platform/config';

async function perCall(name: string, count: number, once: () => Promise<unknown>): Promise<void> {
  for (let warm = 0; warm < 3; warm++) await once();
  const started = process.hrtime.bigint();
  for (let index = 0; index < count; index++) await once();
  const micros = Number(process.hrtime.bigint() - started) / 1000 / count;
  console.log(`${name}: ${(micros / 1000).toFixed(3)} ms per call (${count} calls)`);
}

function peakRssMib(): Promise<number> {
  return readFile('/proc/self/status', 'utf8').then(
    (status) => Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024,
  );
}

async function main(): Promise<void> {
  const config = parseConfig({ PATH: process.env.PATH }, '/');
  const root = await mkdtemp(path.join(os.tmpdir(), 'keel-file-bench-'));
  const workspace = await workspaceFor(root, 'bench');
  await mkdir(path.join(workspace, 'a', 'b'), { recursive: true });
  await writeFile(path.join(workspace, 'a', 'b', 'c.txt'), 'hello\n'.repeat(100));
  const context: ToolContext = {
    threadId: 'bench',
    workspace,
    signal: new AbortController().signal,
    idempotencyKey: 'bench:1',
    environment: config.childEnvironment,
    sandbox: new Sandbox(config.sandbox, config.childEnvironment.PATH),
    networkHosts: [],
  };
  await perCall('read_file, descriptor walk', 2000, () => readFileTool.run({ path: 'a/b/c.txt' }, context));
  await perCall('realpath check, then open by name (the old way, racy)', 2000, async () => {
    const file = await realpath(path.join(workspace, 'a/b/c.txt'));
    await stat(file);
    return readFile(file, 'utf8');
  });
  await perCall('one bubblewrap sandbox per operation (cat)', 50, () =>
    bashTool.run({ command: 'cat a/b/c.txt' }, context),
  );

  for (let n = 1; n <= 4; n++) {
    await writeFile(path.join(workspace, `big${n}`), 'a'.repeat(1_000_000));
    await truncate(path.join(workspace, `big${n}`), 450 * 1024 * 1024);
  }
  const base = await peakRssMib();
  await Promise.all([1, 2, 3, 4].map((n) => readFileTool.run({ path: `big${n}` }, context)));
  const bounded = await peakRssMib();
  console.log(
    `peak RSS: ${base.toFixed(0)} MiB at start, ${bounded.toFixed(0)} MiB after four bounded 450 MB reads`,
  );
  // The old read: the whole file, then its text (skipped for a file with a NUL, as these are).
  await Promise.all(
    [1, 2, 3, 4].map((n) => readFile(path.join(workspace, `big${n}`)).then((bytes) => bytes.includes(0))),
  );
  console.log(`peak RSS: ${(await peakRssMib()).toFixed(0)} MiB after four whole 450 MB reads (the old way)`);
}

void main();
