/**
 * CPU seconds of a whole process tree, from /proc: every live process under a root, with the time
 * of the children each has already waited for (a tool's `bash`, a sandbox), so a process that
 * came and went between two readings is counted too.
 */
import { readdir, readFile } from 'node:fs/promises';

const ticksPerSecond = 100;

/** utime + stime + cutime + cstime of one process, in ticks; undefined once it is gone. */
async function ticksOf(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start at ")"; utime is field 14.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  } catch {
    return undefined;
  }
}

async function childrenOf(pid: number): Promise<number[]> {
  try {
    const tasks = await readdir(`/proc/${pid}/task`);
    const lists = await Promise.all(
      tasks.map((task) => readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '')),
    );
    return lists.flatMap((list) => list.split(' ').filter(Boolean).map(Number));
  } catch {
    return [];
  }
}

/** CPU seconds the process `root` and everything under it have used so far. */
export async function treeCpuSeconds(root: number): Promise<number> {
  let ticks = 0;
  const seen = new Set<number>();
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    ticks += (await ticksOf(pid)) ?? 0;
    queue.push(...(await childrenOf(pid)));
  }
  return ticks / ticksPerSecond;
}

/** CPU seconds of several named trees, read together. */
export async function cpuOf(roots: Record<string, number>): Promise<Record<string, number>> {
  const entries = await Promise.all(
    Object.entries(roots).map(async ([name, pid]) => [name, await treeCpuSeconds(pid)] as const),
  );
  return Object.fromEntries(entries);
}
