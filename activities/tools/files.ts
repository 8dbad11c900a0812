/** File tools, each confined to the conversation's workspace. */
import { chown, readdir, readFile, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { limits } from '../../common/limits';
import { defineTool } from './registry';
import { displayPath, resolveInWorkspace } from './workspace';

const maxListedEntries = 1_000;

async function readText(file: string): Promise<string | { error: string }> {
  const info = await stat(file).catch(() => undefined);
  if (info === undefined) return { error: 'does not exist' };
  if (info.isDirectory()) return { error: 'is a directory' };
  const bytes = await readFile(file);
  if (bytes.includes(0)) return { error: 'is a binary file' };
  return bytes.toString('utf8');
}

/**
 * A root worker's commands run as the sandbox's uid: what the file tools create goes to that
 * uid, so the thread's commands can change it too (the file and its parents in the workspace).
 */
async function handOver(workspace: string, file: string, uid: number | undefined): Promise<void> {
  if (uid === undefined) return;
  // `file` was resolved inside `workspace`, so walking up reaches it.
  for (
    let target = file;
    target !== workspace && path.dirname(target) !== target;
    target = path.dirname(target)
  )
    await chown(target, uid, uid);
}

export const readFileTool = defineTool({
  name: 'read_file',
  description: 'Read a text file from the workspace. Paths are relative to the workspace.',
  input: z.object({
    path: z.string().min(1),
    offset: z.number().int().min(0).optional().describe('First line to return, from 0'),
    limit: z.number().int().positive().optional().describe('Lines to return'),
  }),
  flags: { sideEffects: false, sensitive: false },
  async run({ path: requested, offset, limit }, { workspace }) {
    const file = await resolveInWorkspace(workspace, requested);
    const text = await readText(file);
    if (typeof text !== 'string') return { is_error: true, content: `${requested} ${text.error}` };
    if (offset === undefined && limit === undefined) return { is_error: false, content: text };
    const lines = text.split('\n');
    const start = offset ?? 0;
    return {
      is_error: false,
      content: lines.slice(start, limit === undefined ? undefined : start + limit).join('\n'),
    };
  },
});

export const writeFileTool = defineTool({
  name: 'write_file',
  description: 'Create or overwrite a text file in the workspace, creating parent directories as needed.',
  input: z.object({ path: z.string().min(1), content: z.string().max(limits.toolOutputChars) }),
  flags: { sideEffects: true, sensitive: false },
  async run({ path: requested, content }, { workspace, sandbox }) {
    const file = await resolveInWorkspace(workspace, requested);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content, 'utf8');
    await handOver(workspace, file, sandbox.hostUid);
    return {
      is_error: false,
      content: `Wrote ${content.length} characters to ${displayPath(workspace, file)}.`,
    };
  },
});

export const editFileTool = defineTool({
  name: 'edit_file',
  description:
    'Replace exact text in a workspace file. old_string must occur exactly once unless replace_all is true.',
  input: z.object({
    path: z.string().min(1),
    old_string: z.string().min(1),
    new_string: z.string(),
    replace_all: z.boolean().optional(),
  }),
  flags: { sideEffects: true, sensitive: false },
  async run({ path: requested, old_string, new_string, replace_all }, { workspace }) {
    const file = await resolveInWorkspace(workspace, requested);
    const text = await readText(file);
    if (typeof text !== 'string') return { is_error: true, content: `${requested} ${text.error}` };
    const occurrences = text.split(old_string).length - 1;
    if (occurrences === 0) return { is_error: true, content: `old_string was not found in ${requested}` };
    if (occurrences > 1 && replace_all !== true) {
      return {
        is_error: true,
        content: `old_string occurs ${occurrences} times in ${requested}; make it unique or set replace_all`,
      };
    }
    await writeFile(file, text.split(old_string).join(new_string), 'utf8');
    return {
      is_error: false,
      content: `Replaced ${occurrences} occurrence(s) in ${displayPath(workspace, file)}.`,
    };
  },
});

export const listFilesTool = defineTool({
  name: 'list_files',
  description: 'List files in a workspace directory (the workspace root by default).',
  input: z.object({ path: z.string().optional(), recursive: z.boolean().optional() }),
  flags: { sideEffects: false, sensitive: false },
  async run({ path: requested, recursive }, { workspace }) {
    const directory = await resolveInWorkspace(workspace, requested ?? '.');
    const info = await stat(directory).catch(() => undefined);
    if (info === undefined || !info.isDirectory())
      return { is_error: true, content: `${requested ?? '.'} is not a directory` };
    const entries = await readdir(directory, { withFileTypes: true, recursive: recursive ?? false });
    const names = entries
      .map((entry) => {
        const relative = displayPath(workspace, path.join(entry.parentPath, entry.name));
        return entry.isDirectory() ? `${relative}/` : relative;
      })
      .sort();
    const shown = names.slice(0, maxListedEntries);
    const more = names.length > shown.length ? `\n[… ${names.length - shown.length} more entries]` : '';
    return {
      is_error: false,
      content: shown.length === 0 ? '(empty directory)' : `${shown.join('\n')}${more}`,
    };
  },
});

export const deleteFileTool = defineTool({
  name: 'delete_file',
  description: 'Delete a file or an empty directory in the workspace.',
  input: z.object({ path: z.string().min(1) }),
  flags: { sideEffects: true, sensitive: true },
  async run({ path: requested }, { workspace }) {
    const file = await resolveInWorkspace(workspace, requested);
    if (file === workspace) return { is_error: true, content: 'The workspace itself cannot be deleted.' };
    const info = await stat(file).catch(() => undefined);
    if (info === undefined) return { is_error: true, content: `${requested} does not exist` };
    if (info.isDirectory() && (await readdir(file)).length > 0)
      return { is_error: true, content: `${requested} is a directory that is not empty` };
    await rm(file, { recursive: info.isDirectory() });
    return { is_error: false, content: `Deleted ${displayPath(workspace, file)}.` };
  },
});
