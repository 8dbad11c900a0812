/**
 * The compose worker's seccomp profile (keel-worker-seccomp.json, decision 0540), proven without
 * Docker: test/helpers/seccomp-exec.py loads it with libseccomp as Docker and runc would for the
 * compose worker (an ordinary uid, no capability, no-new-privileges) and starts Keel's own bash
 * tool under it (test/helpers/bash-in-process.ts): the real sandbox, bubblewrap and command runner,
 * all under the filter, as in the container. A command runs; what Docker's default profile refuses
 * is still refused inside the sandbox (EPERM), where without the filter the kernel answers otherwise;
 * Docker's default profile alone refuses the sandbox, each of Keel's six calls is needed.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chown, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Writable } from 'node:stream';
import type { SandboxedCommand } from '../../activities/tools/command-runner';
import type { ToolOutcome } from '../../common/tools';

jest.setTimeout(120_000);

const repositoryRoot = path.resolve(__dirname, '../..');
const profilePath = path.join(repositoryRoot, 'keel-worker-seccomp.json');
const loader = path.join(repositoryRoot, 'test/helpers/seccomp-exec.py');
/** Debian's interpreter: python3-seccomp installs into its dist-packages, not a pyenv's. */
const python = '/usr/bin/python3';
const root = process.getuid?.() === 0;
/** The compose worker's `node` stands in as a uid no account has. */
const workerUid = 46031;

interface Profile {
  syscalls: { names: string[]; action: string; comment?: string }[];
}

/** moby/profiles seccomp v0.2.3 `default.json` (moby/moby, Aug 2026), as `JSON.stringify` writes it. */
const dockerDefaultSha256 = 'afb4934b023cfceaaec1a9d752ca3f801aaa96eb2e59abe6e7ea16976948e080';
const keelCalls = ['clone', 'unshare', 'mount', 'umount2', 'pivot_root', 'sethostname'];

const isKeels = (rule: Profile['syscalls'][number]) => rule.comment?.startsWith('Keel:') === true;

/**
 * Raw system calls (x86_64 numbers) from inside the sandbox, by Debian's python3 and ctypes; prints
 * `<name> <errno>` per call (0: it succeeded). Arguments the kernel answers without a privilege
 * where it can, so that only the filter says EPERM: keyctl reads the session keyring, add_key
 * makes a key in it, bpf's oversized attribute is E2BIG, personality and an AF_VSOCK socket succeed.
 */
const probe = `python3 -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
calls = dict(keyctl=[250, 0, -3, 0], add_key=[248, b"user", b"k", b"v", 1, -3], bpf=[321, 0, 0, 65536],
  kexec_load=[246, 0, 0, 0, 0], open_by_handle_at=[304, -100, 0, 0], perf_event_open=[298, 0, 0, -1, -1, 0],
  personality=[135, 0x0040000], socket_vsock=[41, 40, 1, 0], setns=[308, -1, 0],
  unshare_user=[272, 0x10000000], mount=[165, b"none", b"/tmp", b"tmpfs", 0, 0])
for name, args in calls.items():
    ctypes.set_errno(0)
    result = libc.syscall(*[a if isinstance(a, bytes) else ctypes.c_long(a) for a in args])
    print(name, ctypes.get_errno() if result == -1 else 0)
'`;
const EPERM = 1;

/** A workspace the worker's uid owns, under the system's temporary directory (KEEL_TEST_DIR is root's alone). */
async function newWorkspace(): Promise<string> {
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'keel-seccomp-'));
  await chown(workspace, workerUid, workerUid);
  return workspace;
}

/** `program` as `workerUid` under `profile` (a path, or `unconfined`): its stdout. */
function runUnder(profile: string, program: string[]): Promise<string> {
  return new Promise<string>((resolve, reject) =>
    execFile(
      python,
      [loader, profile, String(workerUid), String(workerUid), ...program],
      { cwd: repositoryRoot, env: { PATH: process.env.PATH ?? '', HOME: '/' }, timeout: 60_000 },
      (error, out, err) => (error ? reject(new Error(`${error.message}\n${err}`)) : resolve(out)),
    ),
  );
}

const helper = [process.execPath, '--import', 'tsx', 'test/helpers/bash-in-process.ts'];

/** Keel's bash tool, in a process as `workerUid` under `profile`. */
async function bashUnder(
  profile: string,
  commands: string[],
): Promise<{ results: ToolOutcome[]; workspace: string }> {
  const workspace = await newWorkspace();
  const stdout = await runUnder(profile, [...helper, workspace, JSON.stringify(commands)]);
  return { results: JSON.parse(stdout) as ToolOutcome[], workspace };
}

/**
 * Runs `launch` (the sandbox's bubblewrap invocation) as `workerUid` under `profile`, its options
 * and identity files on fds 3, 4, … as the command runner hands them over: its exit code and output.
 */
function bubblewrapUnder(
  profile: string,
  launch: SandboxedCommand,
): Promise<{ code: number | null; output: string }> {
  const split = launch.args.indexOf('--');
  const inputs = [
    launch.args
      .slice(0, split)
      .map((arg) => `${arg}\0`)
      .join(''),
    ...launch.inputs,
  ];
  const child = spawn(
    python,
    [
      loader,
      profile,
      String(workerUid),
      String(workerUid),
      launch.file,
      '--args',
      '3',
      ...launch.args.slice(split),
    ],
    { cwd: '/', env: launch.env, stdio: ['ignore', 'pipe', 'pipe', ...inputs.map(() => 'pipe' as const)] },
  );
  // A bubblewrap that fails early closes its pipes unread, as under the runner.
  inputs.forEach((text, index) => {
    const pipe = child.stdio[3 + index] as Writable;
    pipe.on('error', () => {});
    pipe.end(text);
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output })));
}

function errnos(result: ToolOutcome | undefined): Record<string, number> {
  expect(result?.is_error).toBe(false);
  return Object.fromEntries(
    String(result?.content)
      .trim()
      .split('\n')
      .map((line) => line.split(' '))
      .map(([name, errno]) => [name!, Number(errno)]),
  );
}

/** The profile with Keel's rule changed by `edit`, written to a file of its own. */
async function variant(edit: (keels: Profile['syscalls'][number]) => string[] | undefined): Promise<string> {
  const profile = JSON.parse(await readFile(profilePath, 'utf8')) as Profile;
  profile.syscalls = profile.syscalls.flatMap((rule) => {
    if (!isKeels(rule)) return [rule];
    const names = edit(rule);
    return names === undefined ? [] : [{ ...rule, names }];
  });
  const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'keel-profile-')), 'profile.json');
  await writeFile(file, JSON.stringify(profile));
  return file;
}

describe("the compose worker's seccomp profile", () => {
  it("is Docker's default profile and one rule of Keel's, with bubblewrap's calls only", async () => {
    const profile = JSON.parse(await readFile(profilePath, 'utf8')) as Profile;
    const keels = profile.syscalls.filter(isKeels);
    expect(keels).toEqual([expect.objectContaining({ names: keelCalls, action: 'SCMP_ACT_ALLOW' })]);
    const dockers = { ...profile, syscalls: profile.syscalls.filter((rule) => !isKeels(rule)) };
    expect(createHash('sha256').update(JSON.stringify(dockers)).digest('hex')).toBe(dockerDefaultSha256);
  });

  it('is what docker-compose.yml gives the worker', async () => {
    const compose = await readFile(path.join(repositoryRoot, 'docker-compose.yml'), 'utf8');
    expect(compose).toContain("'seccomp=./keel-worker-seccomp.json'");
    expect(compose).not.toContain('seccomp=unconfined');
  });

  (root ? describe : describe.skip)('loaded as Docker would, as an ordinary uid with no capability', () => {
    let confined: ToolOutcome[];
    let workspace: string;

    beforeAll(async () => {
      ({ results: confined, workspace } = await bashUnder(profilePath, [
        'echo ok > made.txt; id -un; grep ^Seccomp: /proc/self/status',
        probe,
      ]));
    });

    it("runs a command in Keel's sandbox under it", async () => {
      expect(confined[0]).toEqual({ is_error: false, content: 'keel\nSeccomp:\t2\n' });
      expect(await readFile(path.join(workspace, 'made.txt'), 'utf8')).toBe('ok\n');
    });

    it("still refuses, inside the sandbox, the calls Docker's default refuses, which the kernel alone would answer", async () => {
      const refused = errnos(confined[1]);
      const unconfined = errnos((await bashUnder('unconfined', [probe])).results[0]);
      const blockedByTheFilter = [
        'keyctl',
        'add_key',
        'bpf',
        'kexec_load',
        'open_by_handle_at',
        'perf_event_open',
        'personality',
        'socket_vsock',
        'setns',
      ];
      for (const call of blockedByTheFilter) {
        expect([call, refused[call]]).toEqual([call, EPERM]);
        expect([call, unconfined[call] === EPERM]).toEqual([call, false]);
      }
      // What the profile adds gives the command nothing: bubblewrap allows no nested user
      // namespace (ENOSPC) and the command has no capability to mount with.
      expect(refused.unshare_user).toBe(unconfined.unshare_user);
      expect(refused.unshare_user).not.toBe(0);
      expect(refused.mount).toBe(EPERM);
    });

    it("cannot start the sandbox under Docker's default profile, nor without any one of Keel's calls", async () => {
      // The tool itself, under Docker's default: it answers that it cannot make a sandbox.
      const docker = await bashUnder(await variant(() => undefined), ['echo ok']);
      expect(docker.results[0]).toEqual({
        is_error: true,
        content: expect.stringContaining('cannot create one (bwrap:') as unknown,
      });
      // The bubblewrap invocation the tool makes, under the profile, then less one of Keel's calls.
      const launch = JSON.parse(
        await runUnder('unconfined', [...helper, await newWorkspace(), '--launch']),
      ) as SandboxedCommand;
      expect(await bubblewrapUnder(profilePath, launch)).toEqual({ code: 0, output: '' });
      const refused = /^bwrap: .*(Operation not permitted|No permissions to create new namespace)/;
      for (const call of keelCalls) {
        const without = await bubblewrapUnder(
          await variant((rule) => rule.names.filter((name) => name !== call)),
          launch,
        );
        expect([call, without.code, without.output]).toEqual([call, 1, expect.stringMatching(refused)]);
      }
    });
  });
});
