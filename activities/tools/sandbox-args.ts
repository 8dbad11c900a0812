/**
 * What bubblewrap is given for each call: the filesystem it recreates (system roots, the parts of
 * `/etc` programs need), the sandbox's own identity files, and the shell that sets the kernel's
 * limits before the command. Sandbox (./sandbox.ts) assembles them.
 */
import { lstat, readlink } from 'node:fs/promises';
import type { SandboxConfig } from '../../platform/config';

/** Where the workspace appears inside the sandbox. */
export const sandboxWorkspace = '/workspace';

/** Top-level system directories: bound read-only, or recreated as the symlinks they are. */
const systemRoots = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
/** What programs need of `/etc` (the dynamic linker, alternatives, certificates, time zone). */
const etcFiles = [
  '/etc/alternatives',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/mime.types',
];
/** Name resolution, bound only when the network is allowed. */
const networkFiles = ['/etc/resolv.conf', '/etc/gai.conf', '/etc/host.conf'];
export const sandboxPath = '/usr/local/bin:/usr/bin:/bin';
export const sandboxUid = 1000;
export const mebibyte = 1024 * 1024;

async function kind(target: string): Promise<'directory' | 'file' | 'symlink' | undefined> {
  try {
    const stat = await lstat(target);
    return stat.isSymbolicLink() ? 'symlink' : stat.isDirectory() ? 'directory' : 'file';
  } catch {
    return undefined;
  }
}

async function readSystemRoots(): Promise<string[]> {
  const args: string[] = [];
  for (const root of systemRoots) {
    const found = await kind(root);
    if (found === 'symlink') args.push('--symlink', await readlink(root), root);
    else if (found !== undefined) args.push('--ro-bind', root, root);
  }
  return args;
}

/**
 * The host's system roots as bubblewrap recreates them, read once per process (seven lstat and
 * readlink calls were a share of every command's cost, decision 0240); a failed read is retried.
 */
let systemRootArgs: Promise<string[]> | undefined;

export async function filesystemArgs(network: boolean): Promise<string[]> {
  systemRootArgs ??= readSystemRoots().catch((error: unknown) => {
    systemRootArgs = undefined;
    throw error;
  });
  // Made first and world-readable: bubblewrap would otherwise create it 0700 for the bind below.
  const args: string[] = ['--perms', '0755', '--dir', '/etc', ...(await systemRootArgs)];
  for (const file of [...etcFiles, ...(network ? networkFiles : [])]) args.push('--ro-bind-try', file, file);
  return args;
}

/** The sandbox's own identity files, never the host's: bound from pipes, in this order. */
export const identityPaths = ['/etc/passwd', '/etc/group', '/etc/hosts', '/etc/nsswitch.conf'];

export function identityFiles(uid: number): string[] {
  const passwd = `root:x:0:0:root:/root:/usr/sbin/nologin\nkeel:x:${uid}:${uid}:Keel sandbox:${sandboxWorkspace}:/bin/bash\n`;
  const group = `root:x:0:\nkeel:x:${uid}:\n`;
  const hosts = '127.0.0.1\tlocalhost keel-sandbox\n::1\tlocalhost\n';
  // Only these files: a host's `passwd: files systemd` or `sss` would look further.
  const nsswitch = 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n';
  return [passwd, group, hosts, nsswitch];
}

/**
 * Closes every descriptor above 2 before anything of the command runs: whatever the worker or the
 * runner inherited and left open (a descriptor without close-on-exec) stays outside.
 */
const closeInherited =
  'for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done; ';

/** Where the proxy's pieces appear inside the sandbox, and the port tools find it on. */
export const proxyDirectory = '/run/keel';
const proxyPort = 3128;
export const proxyUrl = `http://127.0.0.1:${proxyPort}`;

/**
 * Starts the forwarder to the proxy and waits (at most ~2 s) until it listens; it runs before
 * the limits, which would not leave Node the address space it reserves, and dies with the sandbox.
 */
export const forwarderPrelude =
  `${proxyDirectory}/node ${proxyDirectory}/forward.js ${proxyDirectory}/proxy.sock ${proxyPort} /tmp/.keel-proxy-ready </dev/null >/dev/null 2>&1 & ` +
  'for _ in $(seq 100); do [ -e /tmp/.keel-proxy-ready ] && break; sleep 0.02; done; rm -f /tmp/.keel-proxy-ready; ';

/** `ulimit` before the command: each limit is the kernel's, hard and soft alike. */
export function limitedShell(config: SandboxConfig, command: string, prelude = ''): string[] {
  const { cpuSeconds, memoryMb, processes, fileMb } = config.limits;
  const limits = [
    `-t ${cpuSeconds}`,
    `-v ${memoryMb * 1024}`,
    `-u ${processes}`,
    `-f ${fileMb * 1024}`,
    '-c 0',
  ].map((flag) => `ulimit ${flag}`);
  return [
    'bash',
    '--noprofile',
    '--norc',
    '-c',
    `${closeInherited}${prelude}${limits.join(' && ')} && exec bash -c "$1"`,
    'keel',
    command,
  ];
}
