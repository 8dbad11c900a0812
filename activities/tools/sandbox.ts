/**
 * The sandbox model-chosen commands run in: bubblewrap (docs/decisions/0080). Inside, the
 * thread's workspace is read-write at `/workspace`; `/usr` and a few files of `/etc` are
 * read-only; `/tmp`, `/proc` and `/dev` are private; nothing else of the host exists. Fresh
 * pid, ipc, uts, cgroup and (unless allowed) network namespaces; a clean environment; kernel
 * limits per call. It dies with the worker. When the worker runs as root, the command runs as an
 * unprivileged uid of the thread's own (./sandbox-uid.ts), so the kernel's process limit applies
 * (it never applies to root) and one thread's processes do not count against another's. When it
 * runs as an ordinary user (the documented deployments), each command gets a user namespace of its
 * own, mapped to the worker's uid: the kernel counts the process limit per user namespace (Linux
 * 5.14 and later), so one call's processes do not count against another's either, and all of them
 * together stay within the worker's own limit (decision 0465). Nothing
 * of the host's names shows inside: bubblewrap gets its arguments through a pipe (its command
 * line is the sandbox's pid 1's), `/etc` holds the sandbox's own identity files, and the command
 * starts with only fds 0, 1 and 2.
 */
import { mkdtemp, rm, rmdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { SandboxConfig } from '../../platform/config';
import { coveredBy, parseHostEntry, type HostEntry } from '../../platform/network-hosts';
import { runCommand, type DiskGuard, type SandboxedCommand } from './command-runner';
import { diskRoomFor } from './disk-room';
import {
  filesystemArgs,
  forwarderPrelude,
  identityFiles,
  identityPaths,
  limitedShell,
  mebibyte,
  proxyDirectory,
  proxyUrl,
  sandboxPath,
  sandboxUid,
  sandboxWorkspace,
} from './sandbox-args';
import { WorkspaceOwners } from './sandbox-uid';

export type { SandboxedCommand } from './command-runner';
export { sandboxWorkspace } from './sandbox-args';

export interface SandboxCall {
  command: string;
  /** The way out to the thread's network hosts, when it has any (./network-proxy.ts). */
  proxy?: { socket: string; forwarder: string };
  /** The workspace on the host (a realpath). */
  workspace: string;
  /** Variables for the command besides PATH, HOME and TMPDIR. */
  env: Record<string, string>;
}

export type SandboxProbe = { ok: true } | { ok: false; reason: string };

/** How to make the sandbox work, or how to opt out of it knowingly. */
export const sandboxFix =
  'Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) and allow it to create namespaces ' +
  '(unprivileged user namespaces for a non-root worker; in a container, a seccomp/AppArmor profile that permits them). ' +
  'To run commands unconfined instead, set KEEL_SANDBOX=off (not recommended).';

export class Sandbox {
  readonly #config: SandboxConfig;
  /** Where `bwrap` itself is looked up (the worker's PATH); commands inside get their own. */
  readonly #hostPath: string | undefined;
  readonly #root: boolean;
  /** Which uid each workspace's commands run as, and the workspaces handed over to theirs. */
  readonly #owners: WorkspaceOwners;
  #probe: Promise<SandboxProbe> | undefined;

  constructor(config: SandboxConfig, hostPath: string | undefined) {
    this.#config = config;
    this.#hostPath = hostPath;
    this.#root = process.getuid?.() === 0;
    this.#owners = new WorkspaceOwners(config.uidRange, config.uid, (workspace, from, to) =>
      this.#handOver(workspace, from, to),
    );
  }

  get mode(): SandboxConfig['mode'] {
    return this.#config.mode;
  }

  /** What keeps one thread's processes from counting against another's (decisions 0325, 0465). */
  get isolation(): 'a uid per workspace' | 'a user namespace per command' {
    return this.#root ? 'a uid per workspace' : 'a user namespace per command';
  }

  get limits(): SandboxConfig['limits'] {
    return this.#config.limits;
  }

  /**
   * The hosts a call may reach through the proxy: those the thread asked for that the operator
   * allows (checked again here: the thread's list came through Temporal). None when the
   * sandbox is off or already has the whole network.
   */
  grant(asked: readonly string[] | undefined): HostEntry[] {
    if (this.#config.mode === 'off' || this.#config.network === 'on') return [];
    return (asked ?? []).flatMap((raw) => {
      const entry = parseHostEntry(raw);
      return typeof entry !== 'string' && coveredBy(this.#config.networkHosts, entry) ? [entry] : [];
    });
  }

  /** The operator's list (`KEEL_SANDBOX_NETWORK_HOSTS`): its exact entries alone reach special hosts. */
  get operatorHosts(): readonly HostEntry[] {
    return this.#config.networkHosts;
  }

  /**
   * The uid `workspace`'s commands run as on the host, when it differs from the worker's: what a
   * file tool creates there must be handed to it. Each workspace has its own (decision 0325); the
   * first call for a workspace from before hands its files over to it.
   */
  async hostUidFor(workspace: string): Promise<number | undefined> {
    return this.#config.mode === 'on' && this.#root ? this.#owners.uidFor(workspace) : undefined;
  }

  /** What the command runner checks while a command of `workspace` runs (decision 0327). */
  diskGuard(workspace: string): DiskGuard {
    const { workspaceMb, diskReserveMb, inodeReserve, workspaceInodes } = this.#config.limits;
    return {
      workspace,
      quotaBytes: workspaceMb * mebibyte,
      reserveBytes: diskReserveMb * mebibyte,
      reserveInodes: inodeReserve,
      quotaInodes: workspaceInodes,
    };
  }

  /**
   * Whether `bytes` more may be written to `workspace` by a file tool: `undefined` when they may,
   * else the refusal to answer with (an `is_error` result). Same bounds as `diskGuard`.
   */
  roomFor(workspace: string, bytes: number): Promise<string | undefined> {
    return diskRoomFor(this.diskGuard(workspace), bytes, this.#hostPath);
  }

  /**
   * Gives what `from` owns in `workspace` to `to`, inside a sandbox of its own (`#asRootWithin`):
   * `chown -R -P` walks by descriptors and changes links, not what they point to.
   */
  async #handOver(workspace: string, from: number, to: number): Promise<void> {
    const chown = ['chown', '-R', '-P', '-h', `--from=${from}`, `${to}:${to}`, sandboxWorkspace];
    await this.#asRootWithin(
      workspace,
      ['CAP_CHOWN', 'CAP_DAC_READ_SEARCH'],
      chown,
      'handing the workspace over to its uid',
    );
  }

  /**
   * Runs `argv` as root inside a sandbox of its own with only `capabilities`: beside the
   * workspace only read-only system directories, no /proc or /dev, so even a link swapped in
   * mid-walk reaches nothing of the host it could change.
   */
  async #asRootWithin(
    workspace: string,
    capabilities: string[],
    argv: string[],
    what: string,
  ): Promise<void> {
    const launch: SandboxedCommand = {
      file: 'bwrap',
      args: [
        '--die-with-parent',
        '--new-session',
        '--unshare-pid',
        '--unshare-ipc',
        '--unshare-uts',
        '--unshare-net',
        '--unshare-cgroup-try',
        ...(await filesystemArgs(false)),
        '--bind',
        workspace,
        sandboxWorkspace,
        '--clearenv',
        '--setenv',
        'PATH',
        sandboxPath,
        ...capabilities.flatMap((capability) => ['--cap-add', capability]),
        '--',
        ...argv,
      ],
      cwd: '/',
      env: this.#hostPath === undefined ? {} : { PATH: this.#hostPath },
      inputs: [],
      argsByPipe: true,
    };
    // A tree that changes under the walk (a file gone between its listing and its chown) fails
    // one walk; the next one takes what is there then. Three walks, then it is an error.
    let output = '';
    for (let walk = 0; walk < 3; walk += 1) {
      const result = await runCommand(launch, { timeoutMs: 600_000, signal: new AbortController().signal });
      if (result.exitCode === 0) return;
      output = result.output.trim();
    }
    throw new Error(`${what} failed: ${output}`);
  }

  /**
   * Deletes a deleted thread's workspace and, under a root worker, frees its uid (decision 0542):
   * every process of the uid is killed (its commands still running), the files are deleted inside
   * a sandbox of the workspace alone, the directory removed, and only then the uid's entry, so the
   * next workspace to get the uid inherits no process and no file. Returns the uid freed, if any.
   */
  async reclaim(workspace: string): Promise<number | undefined> {
    if (this.#config.mode === 'off') {
      // Commands ran unconfined as the worker (decision 0080): its own files, no uid to free.
      await rm(workspace, { recursive: true, force: true });
      return undefined;
    }
    const root = this.#root;
    // Only a uid that is this workspace's alone: killing its processes touches no other workspace.
    const uid = root ? await this.#owners.owned(workspace) : undefined;
    if (uid !== undefined) await this.#killEveryProcessOf(uid);
    const emptying = ['find', sandboxWorkspace, '-mindepth', '1', '-delete'];
    if (this.#root)
      await this.#asRootWithin(
        workspace,
        ['CAP_DAC_OVERRIDE', 'CAP_FOWNER'],
        emptying,
        'deleting the workspace',
      );
    else await this.#emptyAsTheWorker(workspace);
    await rmdir(workspace).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
    return root ? this.#owners.release(workspace) : undefined;
  }

  /** `kill(-1)` as `uid`: every process of that uid on the host, each a command of one workspace. */
  async #killEveryProcessOf(uid: number): Promise<void> {
    const kill = ['--reuid', String(uid), '--regid', String(uid), '--clear-groups', '--', 'kill', '-9', '-1'];
    const env = this.#hostPath === undefined ? {} : { PATH: this.#hostPath };
    await runCommand(
      { file: 'setpriv', args: kill, cwd: '/', env, inputs: [] },
      { timeoutMs: 30_000, signal: new AbortController().signal },
    );
  }

  /** Under an ordinary-user worker the files are its own: emptied in a call's sandbox, as its uid. */
  async #emptyAsTheWorker(workspace: string): Promise<void> {
    const command = `chmod -R u+rwX ${sandboxWorkspace} 2>/dev/null; find ${sandboxWorkspace} -mindepth 1 -delete`;
    const result = await runCommand(await this.command({ command, workspace, env: {} }), {
      timeoutMs: 600_000,
      signal: new AbortController().signal,
    });
    if (result.exitCode !== 0) throw new Error(`deleting the workspace failed: ${result.output.trim()}`);
  }

  /** Builds the bubblewrap invocation for one call. */
  async command(call: SandboxCall): Promise<SandboxedCommand> {
    const network = this.#config.network === 'on';
    const uid = await this.hostUidFor(call.workspace);
    const namespaces = [
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--unshare-cgroup-try',
      ...(network ? [] : ['--unshare-net']),
      // As root, bubblewrap sets up without a user namespace and setpriv drops to `uid`; else a
      // user namespace maps the worker's uid, and nested ones are refused: the `ulimit -u` inside
      // counts this namespace's processes alone, and a nested one cannot start a count afresh.
      ...(uid === undefined
        ? ['--unshare-user', '--disable-userns', '--uid', String(sandboxUid), '--gid', String(sandboxUid)]
        : []),
    ];
    // Fd 3 carries the arguments themselves (`argsByPipe`); the identity files follow.
    const identity = identityPaths.flatMap((file, index) => [
      '--perms',
      '0644',
      '--ro-bind-data',
      String(4 + index),
      file,
    ]);
    const proxy = call.proxy;
    const proxyArgs =
      proxy === undefined
        ? []
        : [
            '--dir',
            proxyDirectory,
            '--ro-bind',
            process.execPath,
            `${proxyDirectory}/node`,
            '--ro-bind',
            proxy.forwarder,
            `${proxyDirectory}/forward.js`,
            '--bind',
            proxy.socket,
            `${proxyDirectory}/proxy.sock`,
          ];
    const proxyEnv: Record<string, string> =
      proxy === undefined
        ? {}
        : { HTTP_PROXY: proxyUrl, HTTPS_PROXY: proxyUrl, http_proxy: proxyUrl, https_proxy: proxyUrl };
    const env: Record<string, string> = {
      ...call.env,
      ...proxyEnv,
      PATH: sandboxPath,
      HOME: sandboxWorkspace,
      TMPDIR: '/tmp',
    };
    const args = [
      '--die-with-parent',
      '--new-session',
      ...namespaces,
      '--hostname',
      'keel-sandbox',
      ...(await filesystemArgs(network)),
      '--proc',
      '/proc',
      '--dev',
      '/dev',
      '--perms',
      '1777',
      '--size',
      String(this.#config.limits.tmpMb * 1024 * 1024),
      '--tmpfs',
      '/tmp',
      ...identity,
      ...proxyArgs,
      '--bind',
      call.workspace,
      sandboxWorkspace,
      '--chdir',
      sandboxWorkspace,
      '--clearenv',
      ...Object.entries(env).flatMap(([name, value]) => ['--setenv', name, value]),
      ...(uid === undefined
        ? ['--']
        : [
            '--cap-add',
            'CAP_SETUID',
            '--cap-add',
            'CAP_SETGID',
            '--',
            'setpriv',
            `--reuid=${uid}`,
            `--regid=${uid}`,
            '--clear-groups',
            '--inh-caps=-all',
            '--bounding-set=-all',
            '--no-new-privs',
          ]),
      ...limitedShell(this.#config, call.command, proxy === undefined ? '' : forwarderPrelude),
    ];
    return {
      file: 'bwrap',
      args,
      cwd: '/',
      env: this.#hostPath === undefined ? {} : { PATH: this.#hostPath },
      inputs: identityFiles(uid ?? sandboxUid),
      argsByPipe: true,
    };
  }

  /**
   * Whether a sandbox can be created here, found out once by creating one (`run` runs a
   * command the way the bash tool does). The answer is kept for the life of the process.
   */
  probe(run: (command: SandboxedCommand) => Promise<{ ok: boolean; output: string }>): Promise<SandboxProbe> {
    this.#probe ??= (async (): Promise<SandboxProbe> => {
      let workspace: string | undefined;
      try {
        workspace = await mkdtemp(path.join(os.tmpdir(), 'keel-sandbox-probe-'));
        const result = await run(await this.command({ command: 'exit 0', workspace, env: {} }));
        return result.ok ? { ok: true } : { ok: false, reason: result.output.trim() || 'bubblewrap failed' };
      } catch (error) {
        const { code, syscall } = error as NodeJS.ErrnoException;
        const missing = code === 'ENOENT' && syscall?.startsWith('spawn') === true;
        return { ok: false, reason: missing ? 'bubblewrap (bwrap) is not installed' : String(error) };
      } finally {
        if (workspace !== undefined) {
          await rm(workspace, { recursive: true, force: true }).catch(() => {});
          // Its uid, registered beside it in the temporary directory, is freed with it (without
          // the kill of `reclaim`: that registry is not the workspaces', so another workspace's
          // commands may share the uid). Each start used to keep one for good.
          if (this.#root) await this.#owners.release(workspace).catch(() => undefined);
        }
      }
    })();
    return this.#probe;
  }
}
