/** The processes below a `keel up`: what it started, and whether any of them is still alive. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface ProcessRow {
  pid: number;
  /** Its parent's pid. */
  parent: number;
  args: string;
}

/** Every process below `pid`, with its command line: the watchdogs and what they hold (decision 0330). */
export function descendants(pid: number): ProcessRow[] {
  const table = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => {
      const [, child, parent, args] = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line) ?? [];
      return { pid: Number(child), parent: Number(parent), args: args ?? '' };
    });
  const found: ProcessRow[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const row of table.filter((candidate) => candidate.parent === parent)) {
      found.push(row);
      queue.push(row.pid);
    }
  }
  return found;
}

/** The programs below `pid` (the Temporal server, workers, the API…), without their watchdogs. */
export function programs(pid: number): ProcessRow[] {
  return descendants(pid).filter((row) => !row.args.includes('watchdog.cjs'));
}

/** Whether `pid` is a live process (a zombie waiting for its reaper is not). */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}
