/**
 * A small tmpfs of its own for a test's workspaces, so no test ever fills the machine's disk
 * (root only, to mount it). Its free space and inodes, as the disk guard reads them (`statfs`).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface SmallFilesystem {
  directory: string;
  unmount: () => void;
}

/** Mounts `sizeMb` MiB and `inodes` inodes; `owner` makes its root that uid's (an ordinary-user worker's). */
export function smallFilesystem(sizeMb: number, inodes: number, owner?: number): SmallFilesystem {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'keel-small-disk-'));
  const ownership = owner === undefined ? '' : `,uid=${owner},gid=${owner},mode=0755`;
  execFileSync('mount', [
    '-t',
    'tmpfs',
    '-o',
    `size=${sizeMb}m,nr_inodes=${inodes}${ownership}`,
    'keel-small-disk',
    directory,
  ]);
  return {
    directory,
    unmount: () => {
      execFileSync('umount', ['-l', directory]);
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

export const freeMb = (directory: string): number => {
  const stats = statfsSync(directory);
  return (stats.bavail * stats.bsize) / 2 ** 20;
};

export const freeInodes = (directory: string): number => statfsSync(directory).ffree;

/** 8 writers in parallel, each many 1 MiB files (under an 8 MiB file limit), as fast as they go. */
export const diskFiller =
  'for w in 1 2 3 4 5 6 7 8; do (for i in $(seq 100); do head -c 1048576 /dev/zero > f$w-$i || exit; done) & done; wait';
