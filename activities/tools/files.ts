/**
 * File tools, each confined to the conversation's workspace by descriptors (./beneath.ts): every
 * path is walked from the workspace root without following links, only regular files are read
 * or written, and every size is bounded before it is read (decision 0320).
 */
import { StringDecoder } from 'node:string_decoder';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { limits } from '../../common/limits';
import type { ToolOutcome } from '../../common/tools';
import { FileRefused, WorkspaceViolation } from '../errors';
import { Beneath, segmentsOf, shown } from './beneath';
import { defineTool, type ToolContext } from './registry';

/** Bytes of a file edit_file reads whole, and of the file it writes: no 2 KB → 120 MB edits. */
export const maxEditBytes = 4 * 1024 * 1024;
/** Entries list_files shows, and directories deep it goes when recursive. */
export const maxListedEntries = 1_000;
export const maxListDepth = 16;
/**
 * Characters read_file returns: what the transcript keeps of a tool result, less room for the
 * note, so the model reads the file's full size and how to read on (a longer read would be cut
 * again by the transcript, note and all). Every tool's output is capped at `toolOutputChars`.
 */
export const maxReadChars = limits.toolResultChars - 200;
/** Bytes read at a time: a read holds this much at most besides what it returns. */
const chunkBytes = 256 * 1024;

interface Window {
  text: string;
  /** The text stopped at `maxReadChars`. */
  cut: boolean;
}

/**
 * Lines `start` to `start + count` of the file, joined as they were, streamed a chunk at a time
 * and stopped at the cap: a line before the window is counted, never kept.
 */
async function readWindow(
  handle: FileHandle,
  start: number,
  count: number | undefined,
): Promise<Window | 'binary'> {
  const cap = maxReadChars;
  const end = count === undefined ? Infinity : start + count;
  const decoder = new StringDecoder('utf8');
  const buffer = Buffer.alloc(chunkBytes);
  const kept: string[] = [];
  let length = 0;
  let cut = false;
  let line = 0;
  let partial = '';
  // Keeps `piece` as line `line` if the window wants it; false once the window or the cap is full.
  const keep = (piece: string): boolean => {
    if (line < start) return true;
    if (line >= end) return false;
    const room = cap - length - (kept.length > 0 ? 1 : 0);
    if (piece.length > room) {
      kept.push(piece.slice(0, Math.max(0, room)));
      cut = true;
      return false;
    }
    length += piece.length + (kept.length > 0 ? 1 : 0);
    kept.push(piece);
    return true;
  };
  const window = (): Window => ({ text: kept.join('\n'), cut });
  for (let position = 0; ;) {
    const { bytesRead } = await handle.read(buffer, 0, chunkBytes, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    const chunk = buffer.subarray(0, bytesRead);
    if (chunk.includes(0)) return 'binary';
    const pieces = decoder.write(chunk).split('\n');
    for (const piece of pieces.slice(0, -1)) {
      if (!keep(partial + piece)) return window();
      partial = '';
      line += 1;
      if (line >= end) return window();
    }
    // The unfinished last line is held only while the window wants it, and only up to the cap.
    if (line >= start) {
      partial += pieces.at(-1)!;
      if (partial.length > cap - length) {
        keep(partial);
        return window();
      }
    }
  }
  keep(partial + decoder.end());
  return window();
}

/**
 * Runs `work` on the path's components under the thread's workspace root, held open for the call;
 * a refused path (a link, `..`, a FIFO, a missing file) becomes an `is_error` result.
 */
async function confined(
  context: ToolContext,
  requested: string,
  work: (beneath: Beneath, segments: string[]) => Promise<ToolOutcome>,
): Promise<ToolOutcome> {
  try {
    const segments = segmentsOf(requested);
    const beneath = await Beneath.open(
      context.workspace,
      await context.sandbox.hostUidFor(context.workspace),
    );
    try {
      return await work(beneath, segments);
    } finally {
      await beneath.close();
    }
  } catch (error) {
    if (error instanceof FileRefused || error instanceof WorkspaceViolation)
      return { is_error: true, content: error.message };
    throw error;
  }
}

export const readFileTool = defineTool({
  name: 'read_file',
  description:
    `Read a text file from the workspace. Paths are relative to the workspace. At most ${maxReadChars} ` +
    'characters come back; use offset and limit (in lines) to read further into a longer file.',
  input: z.object({
    path: z.string().min(1),
    offset: z.number().int().min(0).optional().describe('First line to return, from 0'),
    limit: z.number().int().positive().optional().describe('Lines to return'),
  }),
  flags: { sideEffects: false, sensitive: false },
  run({ path: requested, offset, limit }, context) {
    return confined(context, requested, async (beneath, segments) => {
      const { handle, info } = await beneath.file(segments, 'read');
      const window = await readWindow(handle, offset ?? 0, limit);
      if (window === 'binary') return { is_error: true, content: `${shown(segments)} is a binary file` };
      if (!window.cut) return { is_error: false, content: window.text };
      return {
        is_error: false,
        content:
          `${window.text}\n[… truncated by Keel: showing ${window.text.length} characters of ${shown(segments)}, ` +
          `a file of ${info.size} bytes; read on with offset and limit]`,
      };
    });
  },
});

export const writeFileTool = defineTool({
  name: 'write_file',
  description: 'Create or overwrite a text file in the workspace, creating parent directories as needed.',
  input: z.object({ path: z.string().min(1), content: z.string().max(limits.toolOutputChars) }),
  flags: { sideEffects: true, sensitive: true },
  run({ path: requested, content }, context) {
    return confined(context, requested, async (beneath, segments) => {
      // The workspace's quota and the disk's reserve, as a command's writes have, so a write cannot fill
      // the disk Temporal and the other threads share (decision 0327).
      const refusal = await context.sandbox.roomFor(context.workspace, Buffer.byteLength(content));
      if (refusal !== undefined) return { is_error: true, content: refusal };
      const { handle } = await beneath.file(segments, 'write');
      await handle.writeFile(content, 'utf8');
      return {
        is_error: false,
        content: `Wrote ${content.length} characters to ${shown(segments)}.`,
      };
    });
  },
});

export const editFileTool = defineTool({
  name: 'edit_file',
  description:
    'Replace exact text in a workspace file. old_string must occur exactly once unless replace_all is true. ' +
    `Files, before and after the edit, are at most ${maxEditBytes} bytes.`,
  input: z.object({
    path: z.string().min(1),
    old_string: z.string().min(1),
    new_string: z.string(),
    replace_all: z.boolean().optional(),
  }),
  flags: { sideEffects: true, sensitive: true },
  run({ path: requested, old_string, new_string, replace_all }, context) {
    return confined(context, requested, async (beneath, segments) => {
      const name = shown(segments);
      const { handle, info } = await beneath.file(segments, 'edit');
      if (info.size > maxEditBytes)
        return {
          is_error: true,
          content: `${name} is ${info.size} bytes; edit_file edits files of at most ${maxEditBytes} bytes (use bash for larger ones)`,
        };
      const bytes = Buffer.alloc(info.size);
      const { bytesRead } = await handle.read(bytes, 0, info.size, 0);
      if (bytes.subarray(0, bytesRead).includes(0))
        return { is_error: true, content: `${name} is a binary file` };
      const text = bytes.subarray(0, bytesRead).toString('utf8');
      const parts = text.split(old_string);
      const occurrences = parts.length - 1;
      if (occurrences === 0) return { is_error: true, content: `old_string was not found in ${name}` };
      if (occurrences > 1 && replace_all !== true) {
        return {
          is_error: true,
          content: `old_string occurs ${occurrences} times in ${name}; make it unique or set replace_all`,
        };
      }
      const resultBytes =
        bytesRead + occurrences * (Buffer.byteLength(new_string) - Buffer.byteLength(old_string));
      if (resultBytes > maxEditBytes)
        return {
          is_error: true,
          content: `Not edited: replacing ${occurrences} occurrence(s) in ${name} would make it ${resultBytes} bytes; edit_file writes files of at most ${maxEditBytes} bytes`,
        };
      if (resultBytes > bytesRead) {
        const refusal = await context.sandbox.roomFor(context.workspace, resultBytes - bytesRead);
        if (refusal !== undefined) return { is_error: true, content: refusal };
      }
      const edited = Buffer.from(parts.join(new_string), 'utf8');
      await handle.truncate(0);
      await handle.write(edited, 0, edited.length, 0);
      return { is_error: false, content: `Replaced ${occurrences} occurrence(s) in ${name}.` };
    });
  },
});

interface Listing {
  found: string[];
  /** More entries were there than `maxListedEntries`. */
  stopped: boolean;
}

/** Paths under the directory `handle` holds, depth first, never through a link, bounded. */
async function listUnder(
  beneath: Beneath,
  handle: FileHandle,
  prefix: readonly string[],
  depth: number,
  listing: Listing,
): Promise<void> {
  // One more than the room left, so a full listing knows whether there was more.
  const entries = await Beneath.entries(handle, maxListedEntries + 1 - listing.found.length);
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (listing.found.length >= maxListedEntries) {
      listing.stopped = true;
      return;
    }
    const here = [...prefix, entry.name];
    listing.found.push(entry.directory ? `${here.join('/')}/` : here.join('/'));
    if (!entry.directory || depth <= 1) continue;
    // A directory swapped for a link since it was listed is refused by its walk, and skipped.
    const child = await beneath.child(handle, entry.name, here).catch(() => undefined);
    if (child !== undefined) await listUnder(beneath, child, here, depth - 1, listing);
    if (listing.stopped) return;
  }
}

export const listFilesTool = defineTool({
  name: 'list_files',
  description:
    `List files in a workspace directory (the workspace root by default); at most ${maxListedEntries} entries, ` +
    `and ${maxListDepth} levels when recursive. Links are listed, never followed.`,
  input: z.object({ path: z.string().optional(), recursive: z.boolean().optional() }),
  flags: { sideEffects: false, sensitive: false },
  run({ path: requested, recursive }, context) {
    return confined(context, requested ?? '.', async (beneath, segments) => {
      const directory = await beneath.directory(segments);
      const listing: Listing = { found: [], stopped: false };
      await listUnder(beneath, directory, [], recursive === true ? maxListDepth : 1, listing);
      const names = listing.found.map((name) =>
        segments.length === 0 ? name : path.posix.join(...segments, name),
      );
      names.sort();
      const more = !listing.stopped ? '' : `\n[… listing stopped by Keel at ${maxListedEntries} entries]`;
      return {
        is_error: false,
        content: names.length === 0 ? '(empty directory)' : `${names.join('\n')}${more}`,
      };
    });
  },
});

export const deleteFileTool = defineTool({
  name: 'delete_file',
  description: 'Delete a file or an empty directory in the workspace.',
  input: z.object({ path: z.string().min(1) }),
  flags: { sideEffects: true, sensitive: true },
  run({ path: requested }, context) {
    return confined(context, requested, async (beneath, segments) => {
      await beneath.remove(segments);
      return { is_error: false, content: `Deleted ${shown(segments)}.` };
    });
  },
});
