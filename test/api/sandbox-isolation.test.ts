/**
 * Threads isolated from each other's resource abuse, and nothing of the host readable, attacked
 * through the API by two owners with the offline scripted model (each `run:` line a bash call) on
 * a real worker, real bubblewrap and the real Temporal test server (issue 29): a fork flood in one
 * owner's thread while the other's answers; a disk filler stopped at the workspace quota and at
 * the filesystem's reserve while the other writes; `/proc/1/cmdline`, `/proc/self/fd`, `/etc`.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createThread, processApiHarness, sendToolLines, type ToolOutput } from '../helpers/api';
import {
  diskFiller as filler,
  freeInodes,
  freeMb,
  smallFilesystem,
  type SmallFilesystem,
} from '../helpers/small-filesystem';

jest.setTimeout(180_000);

const root = process.getuid?.() === 0;
const owners = { alice: `alice-${randomUUID()}`, bob: `bob-${randomUUID()}` };
type Owner = keyof typeof owners;

const headersOf = (owner: Owner) => ({ authorization: `Bearer ${owners[owner]}` });

const newThread = (base: string, owner: Owner) => createThread(base, 'isolation', headersOf(owner));

/** Runs `lines` as one message of `owner`'s (parallel bash calls) and returns their results. */
async function runLines(
  base: string,
  owner: Owner,
  threadId: string,
  lines: string[],
): Promise<ToolOutput[]> {
  return toolLines(
    base,
    owner,
    threadId,
    lines.map((line) => `run: ${line}`),
  );
}

/** One message of scripted tool lines (`run:`, `write:` …); the results in order. */
async function toolLines(
  base: string,
  owner: Owner,
  threadId: string,
  lines: string[],
): Promise<ToolOutput[]> {
  return (await sendToolLines(base, threadId, lines, headersOf(owner))).results;
}

/** Host pids of the processes whose environment has `name=value` (a thread's commands). */
async function processesWith(name: string, value: string): Promise<number> {
  let found = 0;
  for (const pid of (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry))) {
    const environ = await readFile(`/proc/${pid}/environ`, 'latin1').catch(() => '');
    if (environ.split('\0').includes(`${name}=${value}`)) found += 1;
  }
  return found;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts a fork flood in `threadId` and resolves once it holds most of the process limit. */
async function startFlood(
  base: string,
  threadId: string,
  limit: number,
): Promise<{ flood: Promise<ToolOutput[]> }> {
  // Background sleeps hold the processes they start; a classic `:(){ :|:& };:` peaks and decays
  // as its shells give up forking, so it holds the budget less surely.
  const flood = runLines(base, 'alice', threadId, ['while :; do sleep 600 & done']);
  const started = Date.now();
  while ((await processesWith('KEEL_THREAD_ID', threadId)) < limit / 2) {
    if (Date.now() - started > 20_000) throw new Error('the fork flood never started');
    await sleep(100);
  }
  // Wrapped: an async function returning the promise itself would wait for the flood to end.
  return { flood };
}

/**
 * The other thread's command: `echo ok` through a pipe, so its shell forks (a lone builtin, or a
 * lone program its shell execs in place, starts no process and so never meets the limit).
 */
const victimCommand = 'echo ok | cat';
const processLimit = 64;
const floodSeconds = 12;

/**
 * Bob's `victimCommand`, timed, while Alice's thread floods its process budget; Bob's workspace is
 * handed over first, so the measure is of the command alone. `beforeFlood` may prepare Alice's
 * flooding thread, which has not run yet.
 */
async function victimDuringFlood(
  base: string,
  beforeFlood: (victim: string, flooder: string) => Promise<void> = () => Promise.resolve(),
): Promise<{ answer: ToolOutput | undefined; seconds: number; flood: Promise<ToolOutput[]> }> {
  const victim = await newThread(base, 'bob');
  await runLines(base, 'bob', victim, ['true']);
  const flooder = await newThread(base, 'alice');
  await beforeFlood(victim, flooder);
  const { flood } = await startFlood(base, flooder, processLimit);
  const started = performance.now();
  const [answer] = await runLines(base, 'bob', victim, [victimCommand]);
  return { answer, seconds: (performance.now() - started) / 1000, flood };
}

/**
 * Puts Alice's `flooder` on the uid of Bob's `victim`, as a hash collision did before the uid
 * registry (decision 0460), which no longer lets two workspaces share one: the registry's
 * shortcut entry for the flooder's workspace names the victim's uid before its first call.
 */
async function shareVictimsUid(
  base: string,
  workspacesDir: string,
  victim: string,
  flooder: string,
): Promise<void> {
  const scout = await newThread(base, 'alice');
  await runLines(base, 'alice', scout, ['true']);
  const byName = path.join(workspacesDir, '.uids', 'by-name');
  const names = await readdir(byName);
  const victims = names.find((name) => name.startsWith(victim))!;
  const scouts = names.find((name) => name.startsWith(scout))!;
  const aliceScope = scouts.slice(scout.length);
  await writeFile(
    path.join(byName, `${flooder}${aliceScope}`),
    await readFile(path.join(byName, victims), 'utf8'),
  );
}

/** Two owners on the offline model, each call held to `processLimit` processes for `floodSeconds`. */
const floodEnvironment = (): Record<string, string> => ({
  KEEL_MODEL: 'scripted:demo',
  KEEL_API_TOKENS: `alice:${owners.alice},bob:${owners.bob}`,
  KEEL_SANDBOX_TIMEOUT_S: String(floodSeconds),
  KEEL_SANDBOX_PROCESSES: String(processLimit),
});

describe('two owners on one worker: a fork flood', () => {
  const harness = processApiHarness(floodEnvironment);

  (root ? it : it.skip)(
    "leaves the other owner's thread answering in time (root worker: a uid per thread)",
    async () => {
      const { answer, seconds, flood } = await victimDuringFlood(harness.base);
      console.log(
        `[figure] a thread's '${victimCommand}' during another thread's fork flood: ${seconds.toFixed(2)} s`,
      );
      expect(answer).toEqual({ content: 'ok\n', is_error: false });
      expect(seconds).toBeLessThan(5);
      const [flooded] = await flood;
      expect(flooded).toMatchObject({ is_error: true, content: expect.stringMatching(/timed out/) });
      expect(flooded!.content).toMatch(/fork: retry: Resource temporarily unavailable/);
    },
  );
});

describe('the control: two threads on one uid, as a hash collision put them before the registry', () => {
  const harness = processApiHarness(floodEnvironment);

  (root ? it : it.skip)(
    "stalls or fails the other owner's command while the flood holds the shared uid's budget",
    async () => {
      const { answer, seconds, flood } = await victimDuringFlood(harness.base, (victim, flooder) =>
        shareVictimsUid(harness.base, harness.config.workspacesDir, victim, flooder),
      );
      console.log(
        `[figure] the same on one shared uid: ${seconds.toFixed(2)} s, ${JSON.stringify(answer!.content.slice(0, 120))}`,
      );
      expect(answer!.is_error || seconds >= 5).toBe(true);
      await flood;
    },
  );
});

(root ? describe : describe.skip)(
  'two owners on one small disk (a 256 MiB tmpfs of 40,000 inodes; root only, to mount it)',
  () => {
    let disk: SmallFilesystem;
    const reserveMb = 96;
    const quotaMb = 48;
    const inodeReserve = 15_000;
    beforeAll(() => {
      disk = smallFilesystem(256, 40_000);
    });
    afterAll(() => disk?.unmount());
    const harness = processApiHarness(() => ({
      KEEL_MODEL: 'scripted:demo',
      KEEL_API_TOKENS: `alice:${owners.alice},bob:${owners.bob}`,
      KEEL_WORKSPACES_DIR: path.join(disk.directory, 'workspaces'),
      KEEL_SANDBOX_TIMEOUT_S: '60',
      KEEL_SANDBOX_FILE_MB: '8',
      KEEL_SANDBOX_WORKSPACE_MB: String(quotaMb),
      KEEL_SANDBOX_DISK_RESERVE_MB: String(reserveMb),
      KEEL_SANDBOX_INODE_RESERVE: String(inodeReserve),
    }));

    it("stops a thread's disk filler at its workspace quota, and the other owner's thread writes on", async () => {
      const filling = await newThread(harness.base, 'alice');
      const other = await newThread(harness.base, 'bob');
      const started = performance.now();
      const [filled, written] = await Promise.all([
        runLines(harness.base, 'alice', filling, [filler]),
        runLines(harness.base, 'bob', other, ['head -c 1048576 /dev/zero > mine && echo written']),
      ]);
      const seconds = (performance.now() - started) / 1000;
      const used = Number(
        execFileSync('du', ['-s', '-B1M', path.join(disk.directory, 'workspaces')])
          .toString()
          .split('\t')[0],
      );
      console.log(
        `[figure] quota ${quotaMb} MiB: the filler stopped after ${seconds.toFixed(2)} s; workspaces hold ${used} MiB`,
      );
      expect(filled[0]).toMatchObject({
        is_error: true,
        content: expect.stringMatching(
          /^Command stopped by Keel: the workspace reached \d+ MiB, past its quota of 48 MiB/,
        ),
      });
      expect(written[0]).toEqual({ content: 'written\n', is_error: false });
      // The reaction time of the guard: at most a few checks past the quota.
      expect(used).toBeLessThan(quotaMb + 64);
      // The filler's workspace, emptied, works again.
      expect(await runLines(harness.base, 'alice', filling, ['rm -f f* && echo emptied'])).toEqual([
        { content: 'emptied\n', is_error: false },
      ]);
    });

    it("refuses a file tool's write past the workspace quota in one sentence, and writes again once there is room", async () => {
      const thread = await newThread(harness.base, 'alice');
      // 6 files of 8 MiB: the whole quota (the guard may stop it just past; either way it is full).
      await runLines(harness.base, 'alice', thread, [
        'for i in 1 2 3 4 5 6; do head -c 8388608 /dev/zero > big$i || break; done; echo filled',
      ]);
      const [refused] = await toolLines(harness.base, 'alice', thread, ['write: more.txt: hello']);
      expect(refused).toEqual({
        is_error: true,
        content: expect.stringMatching(
          /^Not written: the workspace would pass its quota of 48 MiB \(it uses \d+ MiB\)/,
        ),
      });
      expect(refused!.content).not.toContain(disk.directory);
      await runLines(harness.base, 'alice', thread, ['rm -f big* && echo emptied']);
      expect(await toolLines(harness.base, 'alice', thread, ['write: more.txt: hello'])).toEqual([
        { is_error: false, content: expect.stringMatching(/^Wrote 5 characters to more.txt/) },
      ]);
    });

    it("stops a thread's disk filler at the filesystem's reserve before the disk is full, and the other owner's thread answers", async () => {
      // Others' data (in the test's name): leaves 256 - 120 = ~136 MiB free, 40 above the reserve.
      const ballast = path.join(disk.directory, 'ballast');
      writeFileSync(ballast, Buffer.alloc(120 * 2 ** 20));
      try {
        const threads = [await newThread(harness.base, 'alice'), await newThread(harness.base, 'alice')];
        const other = await newThread(harness.base, 'bob');
        let lowest = freeMb(disk.directory);
        const sampler = setInterval(() => (lowest = Math.min(lowest, freeMb(disk.directory))), 2);
        // Two threads of one owner fill at once: each under its quota, together past the reserve.
        const filled = await Promise.all(
          threads.map((thread) => runLines(harness.base, 'alice', thread, [filler])),
        );
        clearInterval(sampler);
        console.log(
          `[figure] reserve ${reserveMb} MiB: free space went down to ${lowest.toFixed(1)} MiB (of 256), ${freeMb(disk.directory).toFixed(1)} MiB after`,
        );
        const stops = filled.map(([result]) => result!);
        expect(
          stops.some((result) =>
            /^Command stopped by Keel: the disk that holds workspaces was down to \d+ MiB free, within the 96 MiB kept/.test(
              result.content,
            ),
          ),
        ).toBe(true);
        for (const result of stops) expect(result.is_error).toBe(true);
        // Never full: the poll reacts within its interval.
        expect(lowest).toBeGreaterThan(0);
        expect(await runLines(harness.base, 'bob', other, ['echo ok'])).toEqual([
          { content: 'ok\n', is_error: false },
        ]);
      } finally {
        rmSync(ballast, { force: true });
      }
    });

    it("stops a thread's flood of empty files at the inode reserve, and the other owner's thread still creates files", async () => {
      const flooder = await newThread(harness.base, 'alice');
      const other = await newThread(harness.base, 'bob');
      let lowest = freeInodes(disk.directory);
      const sampler = setInterval(() => (lowest = Math.min(lowest, freeInodes(disk.directory))), 2);
      // No byte written: only the inode count stops it (the byte guards see nothing).
      const [flooded] = await runLines(harness.base, 'alice', flooder, [
        'mkdir d && cd d && seq 1 60000 | xargs touch; echo flood ended',
      ]);
      clearInterval(sampler);
      console.log(
        `[figure] inode reserve ${inodeReserve}: free inodes went down to ${lowest} (of 40,000), ${freeInodes(disk.directory)} after`,
      );
      expect(flooded).toMatchObject({
        is_error: true,
        content: expect.stringMatching(
          /^Command stopped by Keel: the disk that holds workspaces was down to \d+ free inodes \(files it can still create\), within the 15000 kept/,
        ),
      });
      expect(lowest).toBeGreaterThan(inodeReserve / 2);
      expect(await runLines(harness.base, 'bob', other, ['echo ok > mine && cat mine'])).toEqual([
        { content: 'ok\n', is_error: false },
      ]);
      const [refused] = await toolLines(harness.base, 'alice', flooder, ['write: more.txt: hello']);
      expect(refused).toMatchObject({
        is_error: true,
        content: expect.stringMatching(
          /^Not written: the disk that holds workspaces is nearly out of inodes/,
        ),
      });
      expect(await runLines(harness.base, 'alice', flooder, ['rm -rf d && echo emptied'])).toEqual([
        { content: 'emptied\n', is_error: false },
      ]);
    });
  },
);

describe('nothing of the host inside the sandbox', () => {
  const harness = processApiHarness(() => ({
    KEEL_MODEL: 'scripted:demo',
    KEEL_API_TOKENS: `alice:${owners.alice},bob:${owners.bob}`,
  }));

  it("shows no host path in pid 1's command line, only fds 0–2 to a command, and only the sandbox's users", async () => {
    const threadId = await newThread(harness.base, 'alice');
    const [cmdline, fds, passwd, getent, etc] = await runLines(harness.base, 'alice', threadId, [
      'tr "\\0" " " < /proc/1/cmdline',
      'ls -l /proc/self/fd | tail -n +2',
      'cat /etc/passwd',
      'getent passwd | cut -d: -f1',
      'cat /etc/* 2>/dev/null | grep -c ":x:[0-9]*:"',
    ]);
    expect(cmdline!.content).toMatch(/^bwrap --args 3 -- setpriv |^bwrap --args 3 -- bash /);
    for (const hostPath of [harness.config.dataDir, os.tmpdir(), process.cwd(), '/work', '/home', '/root'])
      expect(cmdline!.content).not.toContain(hostPath);
    // ls's own descriptor on the directory it lists aside: 0, 1 and 2 alone.
    const open = fds!.content
      .trim()
      .split('\n')
      .map((line) => line.split(' -> '))
      .filter(([, target]) => !/^\/proc\/\d+\/fd$/.test(target ?? ''))
      .map(([name]) => name!.split(' ').at(-1));
    expect(open).toEqual(['0', '1', '2']);
    expect(passwd!.content.split('\n').map((line) => line.split(':')[0])).toEqual(['root', 'keel', '']);
    expect(getent!.content).toBe('root\nkeel\n');
    // passwd and group: 2 + 2 lines of the sandbox's own; none of the host's.
    expect(Number(etc!.content)).toBe(4);
  });
});
