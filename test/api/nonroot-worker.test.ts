/**
 * The worker as an ordinary user (issue 29, decision 0465): a real `keel worker` process started
 * by this (root) test as an unprivileged uid, with a data dir that uid owns, behind the real API,
 * real bubblewrap and the real Temporal test server. Every command gets a user namespace of its
 * own, where the kernel counts its processes (RLIMIT_NPROC per user namespace since Linux 5.14):
 * one thread's fork flood leaves another's command answering in time, although every sandbox runs
 * as the worker's own uid on the host. Nothing of another workspace or of the worker's data dir
 * is readable from a sandbox, nor through a file tool raced by a rename-exchange loop. The rest of
 * the hostile-model cases, proven first against a root worker, hold here too: FIFOs, a device and
 * a socket handed to the file tools, a 300 MB read, edit amplification, a disk filler beside
 * another owner's thread (the workspaces on a small tmpfs the worker's uid owns), and every
 * textual form of loopback and metadata addresses through the proxy.
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  chmod,
  chown,
  copyFile,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { RunningApi } from '../../api/server';
import type { KeelConfig } from '../../platform/config';
import { maxEditBytes, maxReadChars } from '../../activities/tools/files';
import { call, sendToolLines, startTestApi } from '../helpers/api';
import { exchangeCommand } from '../helpers/exchange-racer';
import { expectProbeRefused, proxyProbeCommand } from '../helpers/proxy-probe';
import { diskFiller, freeInodes, smallFilesystem, type SmallFilesystem } from '../helpers/small-filesystem';
import { closeTestClient, testClient, testConfig } from '../helpers/temporal';
import { treeSnapshot } from '../helpers/tree-snapshot';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';

jest.setTimeout(120_000);

const root = process.getuid?.() === 0;
/** A uid no account and no other process has: whatever counts against it is this worker's. */
const workerUid = 46029;
const owners = { alice: `alice-${randomUUID()}`, bob: `bob-${randomUUID()}` };
type Owner = keyof typeof owners;
const processLimit = 64;
const floodSeconds = 12;
/** The workspaces' own small disk (a tmpfs the worker's uid owns), and its bounds. */
const disk = {
  sizeMb: 256,
  inodes: 40_000,
  quotaMb: 48,
  reserveMb: 96,
  inodeReserve: 15_000,
  quotaInodes: 2_000,
};

interface Deployment {
  home: string;
  disk: SmallFilesystem;
  /** A loopback service a sandbox must never reach (on `::`), and one the operator names exactly. */
  secret: http.Server;
  allowed: http.Server;
  dataDir: string;
  workspacesDir: string;
  client: Client;
  config: KeelConfig;
  worker: WorkerProcess;
  api: RunningApi;
  base: string;
}

/** One message of scripted tool lines (`run:`, `read:`, `write:` …) as `owner`; the results in order. */
const send = (base: string, owner: Owner, threadId: string, lines: string[]) =>
  sendToolLines(base, threadId, lines, { authorization: `Bearer ${owners[owner]}` });

async function newThread(base: string, owner: Owner): Promise<string> {
  const threadId = `nonroot-${randomUUID()}`;
  const created = await call(
    base,
    'POST',
    '/threads',
    { thread_id: threadId },
    {
      authorization: `Bearer ${owners[owner]}`,
    },
  );
  expect(created.status).toBe(200);
  return threadId;
}

/** The workspace directory of a thread on the host (`<thread_id>~<owner scope>`). */
async function workspaceOf(deployment: Deployment, threadId: string): Promise<string> {
  const name = (await readdir(deployment.workspacesDir)).find((entry) => entry.startsWith(threadId));
  if (name === undefined) throw new Error(`no workspace for ${threadId}`);
  return path.join(deployment.workspacesDir, name);
}

/** The real uid (first field of `Uid:`) of each host process whose environment has `name=value`. */
async function hostUidsWith(name: string, value: string): Promise<number[]> {
  const uids: number[] = [];
  for (const pid of (await readdir('/proc')).filter((entry) => /^\d+$/.test(entry))) {
    const environ = await readFile(`/proc/${pid}/environ`, 'latin1').catch(() => '');
    if (!environ.split('\0').includes(`${name}=${value}`)) continue;
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    const uid = /^Uid:\s+(\d+)/m.exec(status)?.[1];
    if (uid !== undefined) uids.push(Number(uid));
  }
  return uids;
}

const portOf = (server: http.Server) => (server.address() as AddressInfo).port;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `script` on the host as the worker's uid (no namespace of its own) and says how it ended. */
function onHostAsWorker(script: string, timeoutS: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    execFile(
      'timeout',
      [
        '-s',
        'KILL',
        String(timeoutS),
        'setpriv',
        `--reuid=${workerUid}`,
        `--regid=${workerUid}`,
        '--clear-groups',
        'bash',
        '--noprofile',
        '--norc',
        '-c',
        script,
      ],
      { cwd: '/' },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : ((error as { code?: number }).code ?? null),
          output: stdout + stderr,
        }),
    );
  });
}

(root ? describe : describe.skip)(
  'a worker running as an ordinary user (root starts it, as a container would)',
  () => {
    const deployment = {} as Deployment;

    beforeAll(async () => {
      // Its own directory, world-traversable so the uid reaches it; the data dir is the uid's alone.
      deployment.home = await mkdtemp(path.join(os.tmpdir(), 'keel-nonroot-'));
      await chmod(deployment.home, 0o755);
      deployment.dataDir = path.join(deployment.home, 'data');
      deployment.disk = smallFilesystem(disk.sizeMb, disk.inodes, workerUid);
      deployment.workspacesDir = path.join(deployment.disk.directory, 'workspaces');
      deployment.secret = http.createServer((_request, response) =>
        response.end('secret-of-the-local-service'),
      );
      deployment.allowed = http.createServer((_request, response) =>
        response.end('answer-from-the-allowed-host'),
      );
      await new Promise<void>((resolve) => deployment.secret.listen(0, '::', resolve));
      await new Promise<void>((resolve) => deployment.allowed.listen(0, '127.0.0.1', resolve));
      await mkdir(deployment.dataDir, { mode: 0o700 });
      const bundle = path.join(deployment.home, 'workflow-bundle.js');
      await copyFile(process.env.KEEL_TEST_BUNDLE!, bundle);
      await chown(deployment.dataDir, workerUid, workerUid);
      await chown(deployment.home, workerUid, workerUid);
      const variables = {
        KEEL_MODEL: 'scripted:demo',
        KEEL_API_TOKENS: `alice:${owners.alice},bob:${owners.bob}`,
        KEEL_DATA_DIR: deployment.dataDir,
        KEEL_SANDBOX_TIMEOUT_S: String(floodSeconds),
        KEEL_SANDBOX_PROCESSES: String(processLimit),
        KEEL_WORKSPACES_DIR: deployment.workspacesDir,
        KEEL_SANDBOX_WORKSPACE_MB: String(disk.quotaMb),
        KEEL_SANDBOX_DISK_RESERVE_MB: String(disk.reserveMb),
        KEEL_SANDBOX_INODE_RESERVE: String(disk.inodeReserve),
        KEEL_SANDBOX_WORKSPACE_INODES: String(disk.quotaInodes),
        // The operator's wildcard covers the secret's port: only the canonical check stands between.
        KEEL_SANDBOX_NETWORK_HOSTS: `localhost:${portOf(deployment.allowed)},*:${portOf(deployment.secret)}`,
      };
      deployment.client = await testClient();
      deployment.config = await testConfig(variables);
      deployment.worker = await startWorkerProcess({
        env: {
          ...variables,
          KEEL_TASK_QUEUE: deployment.config.taskQueue,
          KEEL_WORKFLOW_BUNDLE: bundle,
          HOME: deployment.home,
        },
        user: { uid: workerUid, gid: workerUid },
      });
      deployment.api = await startTestApi(deployment.client, deployment.config);
      deployment.base = deployment.api.url;
    });

    afterAll(async () => {
      await deployment.api?.stop();
      await deployment.worker?.stop('SIGTERM');
      await closeTestClient();
      deployment.secret?.close();
      deployment.allowed?.close();
      deployment.disk?.unmount();
      if (deployment.home !== undefined) await rm(deployment.home, { recursive: true, force: true });
    });

    it("leaves the other owner's thread answering in time during a fork flood, every sandbox on the worker's uid", async () => {
      const status = await readFile(`/proc/${deployment.worker.pid}/status`, 'utf8');
      expect(/^Uid:\s+(.*)$/m.exec(status)![1]!.split(/\s+/)).toEqual(Array(4).fill(String(workerUid)));
      const ready = await deployment.worker.waitForLog((line) => line.msg === 'commands run in a sandbox');
      expect(ready).toMatchObject({ isolation: 'a user namespace per command' });
      // This machine's limit (tens of thousands) leaves every concurrent call its budget: no warning.
      expect(deployment.worker.logs.filter((line) => /process limit/.test(line.msg ?? ''))).toEqual([]);
      const victim = await newThread(deployment.base, 'bob');
      await send(deployment.base, 'bob', victim, ['run: true']);
      const flooder = await newThread(deployment.base, 'alice');
      const flood = send(deployment.base, 'alice', flooder, ['run: while :; do sleep 600 & done']);
      const floodStarted = Date.now();
      let uids = await hostUidsWith('KEEL_THREAD_ID', flooder);
      while (uids.length < processLimit / 2) {
        if (Date.now() - floodStarted > 20_000) throw new Error('the fork flood never started');
        await sleep(100);
        uids = await hostUidsWith('KEEL_THREAD_ID', flooder);
      }
      // On the host every process of the flood is the worker's own uid: no uid per thread here.
      expect(new Set(uids)).toEqual(new Set([workerUid]));

      const before = performance.now();
      const { results } = await send(deployment.base, 'bob', victim, ['run: echo ok | cat']);
      const seconds = (performance.now() - before) / 1000;
      console.log(
        `[figure] non-root worker: a thread's 'echo ok | cat' during another thread's fork flood: ${seconds.toFixed(2)} s`,
      );
      expect(results[0]).toEqual({ content: 'ok\n', is_error: false });
      expect(seconds).toBeLessThan(5);

      // The control, at the same moment: the same limit on the host, where the kernel counts the
      // uid as a whole (the flood's processes and the worker's), stalls the same pipeline.
      const control = await onHostAsWorker(`ulimit -u ${processLimit}; echo ok | cat`, 3);
      console.log(
        `[figure] the same on the host as the worker's uid: exit ${control.code}, ${JSON.stringify(control.output.slice(0, 80))}`,
      );
      expect(control.output).not.toBe('ok\n');

      const [flooded] = (await flood).results;
      expect(flooded).toMatchObject({ is_error: true, content: expect.stringMatching(/timed out/) });
      expect(flooded!.content).toMatch(/fork: retry: Resource temporarily unavailable/);
      // The flood is gone with its sandbox, and the thread answers again.
      expect(await hostUidsWith('KEEL_THREAD_ID', flooder)).toEqual([]);
      expect((await send(deployment.base, 'alice', flooder, ['run: echo back'])).results[0]).toEqual({
        content: 'back\n',
        is_error: false,
      });
    });

    it("reads nothing of another workspace or the worker's data dir from a sandbox, and what it makes is the worker's uid's", async () => {
      const keys = `keys-canary-${randomUUID()}`;
      const keysFile = path.join(deployment.dataDir, 'encryption-keys-canary');
      await writeFile(keysFile, keys, { mode: 0o600 });
      await chown(keysFile, workerUid, workerUid);
      const bobSecret = `bob-secret-${randomUUID()}`;
      const bobs = await newThread(deployment.base, 'bob');
      await send(deployment.base, 'bob', bobs, [`run: echo ${bobSecret} > note.txt`]);
      const bobNote = path.join(await workspaceOf(deployment, bobs), 'note.txt');

      const alices = await newThread(deployment.base, 'alice');
      const { results } = await send(deployment.base, 'alice', alices, [
        `run: cat ${bobNote}`,
        `run: cat ${keysFile}`,
        `run: ls ${deployment.workspacesDir} ${deployment.dataDir}`,
        // Every directory the sandbox has, searched for either secret (the system roots are the host's, read-only).
        `run: grep -rsl -D skip -e ${bobSecret} -e ${keys} /workspace /tmp /etc /run /root /home; echo searched`,
        'run: echo mine > by-bash.txt && id -u',
        'write: by-tool.txt: mine',
      ]);
      for (const result of results.slice(0, 3)) {
        expect(result.is_error).toBe(true);
        expect(result.content).toMatch(/No such file or directory/);
      }
      expect(results[3]).toEqual({ content: 'searched\n', is_error: false });
      // The results only: the model's own message names both secrets (the grep above).
      for (const result of results) {
        expect(result.content).not.toContain(bobSecret);
        expect(result.content).not.toContain(keys);
      }
      // Inside, the sandbox's own uid; on the host, the worker's.
      expect(results[4]).toEqual({ content: '1000\n', is_error: false });
      const workspace = await workspaceOf(deployment, alices);
      for (const made of ['by-bash.txt', 'by-tool.txt'])
        expect((await stat(path.join(workspace, made))).uid).toBe(workerUid);
    });

    it("never leaves the workspace while a racer swaps directories for links to the worker's data dir and another workspace", async () => {
      const keys = `keys-canary-${randomUUID()}`;
      const canary = path.join(deployment.dataDir, 'keys');
      await mkdir(canary, { mode: 0o700 });
      await writeFile(path.join(canary, 'secret.txt'), keys);
      for (let index = 0; index < 20; index++) await writeFile(path.join(canary, `victim-${index}`), keys);
      for (const entry of [canary, ...(await readdir(canary)).map((name) => path.join(canary, name))])
        await chown(entry, workerUid, workerUid);
      const otherSecret = `other-secret-${randomUUID()}`;
      const other = await newThread(deployment.base, 'bob');
      await send(deployment.base, 'bob', other, [
        `run: echo ${otherSecret} > note.txt && for i in $(seq 0 19); do echo ${otherSecret} > keep-$i; done`,
      ]);
      const otherWorkspace = await workspaceOf(deployment, other);

      const threadId = await newThread(deployment.base, 'alice');
      const setUp = await send(deployment.base, 'alice', threadId, [
        'run: mkdir -p d1 d2 && echo inside > d1/secret.txt && echo inside > d2/note.txt' +
          ' && for i in $(seq 0 19); do echo inside > d1/victim-$i; echo inside > d2/keep-$i; done' +
          ` && ln -s ${canary} l1 && ln -s ${otherWorkspace} l2 && echo ready`,
      ]);
      expect(setUp.results[0]).toEqual({ content: 'ready\n', is_error: false });
      const before = { canary: await treeSnapshot(canary), other: await treeSnapshot(otherWorkspace) };

      const racers = [1, 2].map((n) => `${exchangeCommand(`d${n}`, `l${n}`, 8)} &`).join(' ');
      const lines = [`run: ${racers} wait`];
      for (let index = 0; index < 20; index++) {
        const n = (index % 2) + 1;
        const target = n === 1 ? 'secret.txt' : 'note.txt';
        const victim = n === 1 ? `victim-${index}` : `keep-${index}`;
        lines.push(`read: d${n}/${target}`, `write: d${n}/new-${index}: pwned`, `delete: d${n}/${victim}`);
      }
      const { results, body } = await send(deployment.base, 'alice', threadId, lines);
      expect(results[0]!.content).toMatch(/exchanges \d+/);
      const fileResults = results.slice(1);
      expect(body).not.toContain(keys);
      expect(body).not.toContain(otherSecret);
      for (const result of fileResults) expect(result.content).not.toContain(deployment.dataDir);
      // The race was real: calls met both the directories and the links.
      expect(fileResults.filter((result) => result.content === 'inside\n').length).toBeGreaterThan(0);
      expect(fileResults.filter((result) => /symbolic link/.test(result.content)).length).toBeGreaterThan(0);
      expect(await treeSnapshot(canary)).toEqual(before.canary);
      expect(await treeSnapshot(otherWorkspace)).toEqual(before.other);
    });

    /** The thread's next message still gets its answer. */
    async function expectStillAnswers(owner: Owner, threadId: string): Promise<void> {
      const marker = `still-here-${randomUUID()}`;
      const { results } = await send(deployment.base, owner, threadId, [`run: echo ${marker}`]);
      expect(results).toEqual([{ content: `${marker}\n`, is_error: false }]);
    }

    it("refuses FIFOs, a device and a socket while the other owner's write_file and bash answer promptly", async () => {
      const threadId = await newThread(deployment.base, 'alice');
      await send(deployment.base, 'alice', threadId, [
        `run: mkfifo f1 f2 f3 f4 && python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock")' && echo made`,
      ]);
      // The sandbox cannot make a device; root on the host can, and the tools must still refuse one
      // the worker could open for writing.
      const device = path.join(await workspaceOf(deployment, threadId), 'zero');
      execFileSync('mknod', [device, 'c', '1', '5']);
      await chown(device, workerUid, workerUid);
      const other = await newThread(deployment.base, 'bob');
      const hostile = send(deployment.base, 'alice', threadId, [
        'read: f1',
        'read: f2',
        'read: f3',
        'read: f4',
        'write: f1: x',
        'read: zero',
        'write: zero: x',
        'read: sock',
      ]);
      const started = performance.now();
      const { results: others } = await send(deployment.base, 'bob', other, [
        'write: ok.txt: fine',
        'run: echo alive',
      ]);
      expect((performance.now() - started) / 1000).toBeLessThan(15);
      expect(others).toEqual([
        { content: 'Wrote 4 characters to ok.txt.', is_error: false },
        { content: 'alive\n', is_error: false },
      ]);
      const { results } = await hostile;
      expect(results).toEqual([
        ...[1, 2, 3, 4].map((n) => ({ content: `f${n} is a FIFO, not a regular file`, is_error: true })),
        { content: expect.stringMatching(/^f1 is a FIFO/), is_error: true },
        { content: 'zero is a device, not a regular file', is_error: true },
        { content: expect.stringMatching(/^zero is a device/), is_error: true },
        { content: 'sock is a socket', is_error: true },
      ]);
      await expectStillAnswers('alice', threadId);
    });

    it('reads a 300 MB file capped with its size said, and refuses an edit that turns 2 KB into 120 MB', async () => {
      const threadId = await newThread(deployment.base, 'alice');
      await send(deployment.base, 'alice', threadId, [
        'run: head -c 1000000 /dev/zero | tr "\\0" a > big && truncate -s 300M big' +
          ' && head -c 60000 /dev/zero | tr "\\0" a > amp.txt && echo made',
      ]);
      const edit = JSON.stringify({
        path: 'amp.txt',
        old_string: 'a',
        new_string: 'b'.repeat(2_000),
        replace_all: true,
      });
      const { results } = await send(deployment.base, 'alice', threadId, [
        'read: big',
        `tool: edit_file ${edit}`,
      ]);
      expect(results[0]!.is_error).toBe(false);
      expect(results[0]!.content).toContain(
        `[… truncated by Keel: showing ${maxReadChars} characters of big, a file of ${300 * 1024 * 1024} bytes; read on with offset and limit]`,
      );
      expect(results[1]).toEqual({
        content: `Not edited: replacing 60000 occurrence(s) in amp.txt would make it 120000000 bytes; edit_file writes files of at most ${maxEditBytes} bytes`,
        is_error: true,
      });
      expect((await stat(path.join(await workspaceOf(deployment, threadId), 'amp.txt'))).size).toBe(60_000);
      await expectStillAnswers('alice', threadId);
    });

    it("stops a disk filler at its workspace quota while the other owner's tools answer in time, and both threads answer after", async () => {
      const filling = await newThread(deployment.base, 'alice');
      const other = await newThread(deployment.base, 'bob');
      const filled = send(deployment.base, 'alice', filling, [`run: ${diskFiller}`]);
      const started = performance.now();
      const { results: others } = await send(deployment.base, 'bob', other, [
        'write: ok.txt: fine',
        'run: head -c 1048576 /dev/zero > mine && echo written',
      ]);
      const seconds = (performance.now() - started) / 1000;
      console.log(
        `[figure] non-root worker: the other owner's write and command beside a disk filler: ${seconds.toFixed(2)} s`,
      );
      expect(seconds).toBeLessThan(10);
      expect(others).toEqual([
        { content: 'Wrote 4 characters to ok.txt.', is_error: false },
        { content: 'written\n', is_error: false },
      ]);
      const [stopped] = (await filled).results;
      expect(stopped).toMatchObject({
        is_error: true,
        content: expect.stringMatching(
          new RegExp(
            `^Command stopped by Keel: the workspace reached \\d+ MiB, past its quota of ${disk.quotaMb} MiB`,
          ),
        ),
      });
      expect(stopped!.content).not.toContain(deployment.workspacesDir);
      // The filler's workspace, emptied, works again; the other thread still answers.
      expect(
        (await send(deployment.base, 'alice', filling, ['run: rm -f f* && echo emptied'])).results,
      ).toEqual([{ content: 'emptied\n', is_error: false }]);
      await expectStillAnswers('bob', other);
    });

    it('never lets a sandboxed command reach a loopback listener in any form of its address', async () => {
      const [secretPort, allowedPort] = [portOf(deployment.secret), portOf(deployment.allowed)];
      const threadId = `nonroot-net-${randomUUID()}`;
      const created = await call(
        deployment.base,
        'POST',
        '/threads',
        { thread_id: threadId, config: { network_hosts: [`*:${secretPort}`, `localhost:${allowedPort}`] } },
        { authorization: `Bearer ${owners.alice}` },
      );
      expect(created.status).toBe(200);
      const { results } = await send(deployment.base, 'alice', threadId, [
        `run: ${proxyProbeCommand(secretPort, allowedPort)}`,
      ]);
      expectProbeRefused(results[0]!.content, allowedPort);
    });

    it("stops a flood of empty files at the workspace's inode quota, long before the filesystem's reserve, while the other owner's thread creates files", async () => {
      const flooder = await newThread(deployment.base, 'alice');
      const other = await newThread(deployment.base, 'bob');
      const filesystem = deployment.disk.directory;
      let lowest = freeInodes(filesystem);
      const before = lowest;
      const sampler = setInterval(() => (lowest = Math.min(lowest, freeInodes(filesystem))), 2);
      // No byte written: only an inode count stops it.
      const flood = send(deployment.base, 'alice', flooder, [
        'run: mkdir d && cd d && seq 1 60000 | xargs touch; echo flood ended',
      ]);
      const started = performance.now();
      const { results: others } = await send(deployment.base, 'bob', other, [
        'run: echo ok > mine && cat mine',
        'write: ok.txt: fine',
      ]);
      const seconds = (performance.now() - started) / 1000;
      const [flooded] = (await flood).results;
      clearInterval(sampler);
      const used = Number(
        execFileSync('du', ['-s', '-x', '--inodes', await workspaceOf(deployment, flooder)])
          .toString()
          .split('\t')[0],
      );
      console.log(
        `[figure] workspace inode quota ${disk.quotaInodes}: the flood stopped at ${used} inodes in its workspace; ` +
          `the filesystem's free inodes went from ${before} down to ${lowest} (reserve ${disk.inodeReserve}); ` +
          `the other owner's command and write in ${seconds.toFixed(2)} s`,
      );
      expect(flooded).toMatchObject({
        is_error: true,
        content: expect.stringMatching(
          new RegExp(
            `^Command stopped by Keel: the workspace reached \\d+ files and directories, past its quota of ${disk.quotaInodes}\\.`,
          ),
        ),
      });
      // Stopped by the workspace's own bound: the reserve for everyone else was never reached.
      expect(lowest).toBeGreaterThan(disk.inodeReserve);
      expect(others).toEqual([
        { content: 'ok\n', is_error: false },
        { content: 'Wrote 4 characters to ok.txt.', is_error: false },
      ]);
      expect(seconds).toBeLessThan(10);
      const [refused] = (await send(deployment.base, 'alice', flooder, ['write: more.txt: hello'])).results;
      expect(refused).toEqual({
        is_error: true,
        content: expect.stringMatching(
          new RegExp(
            `^Not written: the workspace holds \\d+ files and directories, its quota is ${disk.quotaInodes}\\.`,
          ),
        ),
      });
      expect(
        (await send(deployment.base, 'alice', flooder, ['run: rm -rf d && echo emptied'])).results,
      ).toEqual([{ content: 'emptied\n', is_error: false }]);
      expect((await send(deployment.base, 'alice', flooder, ['write: more.txt: hello'])).results).toEqual([
        { content: 'Wrote 5 characters to more.txt.', is_error: false },
      ]);
    });
  },
);
