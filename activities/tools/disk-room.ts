/**
 * The disk bounds of decision 0327 for a write the worker makes itself (a file tool's), checked
 * before it: the workspace's quota and the reserve of free space kept on its filesystem. A
 * command's writes are bounded while it runs, by the command runner (./command-runner.ts).
 */
import { statfs } from 'node:fs/promises';
import { runCommand, type DiskGuard } from './command-runner';

const mebibyte = 1024 * 1024;
const never = new AbortController().signal;

/** Whole MiB, rounded down, for messages. */
export function mebibytes(bytes: number): number {
  return Math.floor(bytes / mebibyte);
}

/**
 * Bytes the workspace takes on disk (or, with `unit: 'inodes'`, its files, directories and links):
 * `du`, which follows no link and stays on one filesystem; or `undefined` when it cannot say (du
 * aborts when directories are renamed under its walk, which a thread's own commands can do on
 * purpose).
 */
export async function workspaceUsage(
  workspace: string,
  hostPath: string | undefined,
  unit: 'bytes' | 'inodes' = 'bytes',
): Promise<number | undefined> {
  const result = await runCommand(
    {
      file: 'du',
      args: ['-s', '-x', '-P', unit === 'bytes' ? '-B1' : '--inodes', '--', workspace],
      cwd: '/',
      env: { PATH: hostPath ?? '/usr/bin:/bin' },
      inputs: [],
    },
    { timeoutMs: 60_000, signal: never },
  );
  // stdout and stderr come interleaved: a file that vanished mid-walk is a line of stderr, and du
  // still prints its total, last.
  const total = result.output
    .split('\n')
    .map((line) => /^(\d+)\t/.exec(line)?.[1])
    .findLast((found) => found !== undefined);
  return total === undefined ? undefined : Number(total);
}

/**
 * `undefined` when `bytes` more fit in the workspace under `guard`, else why not (for an
 * `is_error` result; it names no host path).
 */
export async function diskRoomFor(
  guard: DiskGuard,
  bytes: number,
  hostPath: string | undefined,
): Promise<string | undefined> {
  const stats = await statfs(guard.workspace);
  const free = stats.bavail * stats.bsize;
  if (free - bytes < guard.reserveBytes)
    return (
      `Not written: the disk that holds workspaces is nearly full (${mebibytes(free)} MiB free, ` +
      `${mebibytes(guard.reserveBytes)} MiB of it kept for Keel and other threads).`
    );
  // An empty file takes an inode and no byte; btrfs reports no inode count (0).
  if (stats.files > 0 && stats.ffree - 1 < guard.reserveInodes)
    return (
      `Not written: the disk that holds workspaces is nearly out of inodes (${stats.ffree} files it can ` +
      `still create, ${guard.reserveInodes} of them kept for Keel and other threads). Delete files to make room.`
    );
  // The two walks at once: a write waits for the longer, not for both.
  const [used, inodes] = await Promise.all([
    workspaceUsage(guard.workspace, hostPath),
    // As for the commands' guard: a filesystem that counts no inodes (btrfs) is not checked.
    stats.files > 0 ? workspaceUsage(guard.workspace, hostPath, 'inodes') : undefined,
  ]);
  // Unmeasured (a walk raced by the thread itself): the reserves above still hold for everyone.
  if (used !== undefined && used + bytes > guard.quotaBytes)
    return (
      `Not written: the workspace would pass its quota of ${mebibytes(guard.quotaBytes)} MiB ` +
      `(it uses ${mebibytes(used)} MiB). Delete files to make room.`
    );
  if (inodes !== undefined && inodes + 1 > guard.quotaInodes)
    return (
      `Not written: the workspace holds ${inodes} files and directories, its quota is ` +
      `${guard.quotaInodes}. Delete files to make room.`
    );
  return undefined;
}
