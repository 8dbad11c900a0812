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

/** Bytes the workspace takes on disk: `du`, which follows no link and stays on one filesystem. */
export async function workspaceUsage(workspace: string, hostPath: string | undefined): Promise<number> {
  const result = await runCommand(
    {
      file: 'du',
      args: ['-s', '-x', '-P', '-B1', '--', workspace],
      cwd: '/',
      env: { PATH: hostPath ?? '/usr/bin:/bin' },
      inputs: [],
    },
    { timeoutMs: 60_000, signal: never },
  );
  const used = Number.parseInt(result.output, 10);
  if (!Number.isFinite(used)) throw new Error('could not measure the workspace');
  return used;
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
  const used = await workspaceUsage(guard.workspace, hostPath);
  if (used + bytes > guard.quotaBytes)
    return (
      `Not written: the workspace would pass its quota of ${mebibytes(guard.quotaBytes)} MiB ` +
      `(it uses ${mebibytes(used)} MiB). Delete files to make room.`
    );
  return undefined;
}
