/** What must not change in a directory an attacker aims at: every entry's content, owner and mode. */
import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

export async function treeSnapshot(directory: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(directory, { recursive: true, withFileTypes: true })) {
    const where = path.join(entry.parentPath, entry.name);
    const info = await lstat(where);
    const content = entry.isFile() ? await readFile(where, 'utf8') : '';
    found.push(
      `${path.relative(directory, where)} ${info.uid}:${info.gid} ${info.mode.toString(8)} ${content}`,
    );
  }
  const root = await lstat(directory);
  return [`. ${root.uid}:${root.gid} ${root.mode.toString(8)}`, ...found.sort()];
}
