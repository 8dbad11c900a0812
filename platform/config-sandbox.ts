/** The sandbox's configuration (`KEEL_SANDBOX_*`): what confines and bounds every command a tool runs. */
import type { HostEntry } from './network-hosts';

/**
 * Limits on every sandboxed command (bash), each enforced by the kernel: `ulimit` inside the
 * sandbox, and a size-capped tmpfs for `/tmp`.
 */
export interface SandboxLimits {
  /** Wall-clock seconds before a command that names no timeout is killed (`KEEL_SANDBOX_TIMEOUT_S`, at most 600). @default 120 */
  wallSeconds: number;
  /** CPU seconds per process (`KEEL_SANDBOX_CPU_S`). @default 600 */
  cpuSeconds: number;
  /** Address space per process in MiB (`KEEL_SANDBOX_MEMORY_MB`). @default 4096 */
  memoryMb: number;
  /** Processes alive at once inside one call's sandbox (`KEEL_SANDBOX_PROCESSES`). @default 256 */
  processes: number;
  /** Largest file a command may write, in MiB (`KEEL_SANDBOX_FILE_MB`). @default 1024 */
  fileMb: number;
  /** Size of the private `/tmp`, in MiB (`KEEL_SANDBOX_TMP_MB`). @default 512 */
  tmpMb: number;
  /**
   * Disk a thread's workspace may use, in MiB (`KEEL_SANDBOX_WORKSPACE_MB`): a command that takes
   * it past this is stopped, a file tool's write that would is refused, so one thread cannot fill
   * the filesystem Temporal's database and the other threads write to (decision 0327). @default 10240
   */
  workspaceMb: number;
  /**
   * Free space, in MiB, kept on the workspaces' filesystem for everyone else (Temporal, other
   * threads) (`KEEL_SANDBOX_DISK_RESERVE_MB`): a command that brings it lower is stopped, a
   * write that would is refused. @default 1024
   */
  diskReserveMb: number;
  /**
   * Free inodes (files, directories, links) kept on the workspaces' filesystem for everyone else
   * (`KEEL_SANDBOX_INODE_RESERVE`): a command that creates files past it is stopped, a file tool's
   * write is refused, as for `diskReserveMb`. Not checked on filesystems that report no inode
   * count (btrfs). @default 100000
   */
  inodeReserve: number;
  /**
   * Inodes (files, directories, links) a thread's workspace may hold
   * (`KEEL_SANDBOX_WORKSPACE_INODES`): a command that creates more is stopped, a file tool's write
   * is refused, so one thread cannot take every inode and leave the others unable to create a
   * file (decision 0500). Walked only when the filesystem's count grows near it; not checked
   * on filesystems that report no inode count (btrfs). @default 1000000
   */
  workspaceInodes: number;
}

export interface SandboxConfig {
  /** `on` (bubblewrap, the default) or `off` (unconfined; the operator chose it and is warned). */
  mode: 'on' | 'off';
  /** Whether sandboxed commands reach the network at all (`KEEL_SANDBOX_NETWORK`). @default 'off' */
  network: 'off' | 'on';
  /**
   * Hosts a thread may ask its commands to reach through Keel's proxy (`network_hosts`), while
   * `network` is `off` (`KEEL_SANDBOX_NETWORK_HOSTS`: names, `*.domain`, `host:port`, `*`), in
   * canonical form. An entry without a port allows 80 and 443. A loopback, private, link-local or
   * metadata host is reached only when an entry names it exactly with its port; never through a
   * wildcard (docs/decisions/0316).
   * @default [] (no thread may ask)
   */
  networkHosts: HostEntry[];
  /**
   * The uid (and gid) every thread's commands ran as under a root worker before each thread had
   * its own (`KEEL_SANDBOX_UID`): a workspace still owned by it is handed to the thread's uid, so
   * old threads do not stay on one uid and starve each other's process limit (decision 0325).
   * @default 65534
   */
  uid: number;
  /**
   * The uids threads' commands run as under a root worker: each workspace has its own, from a
   * hash of its name into `[base, base + count)` (`KEEL_SANDBOX_UID_BASE`, `KEEL_SANDBOX_UID_COUNT`;
   * decision 0325). The kernel counts the process limit per uid, so on one shared uid a fork
   * flood in one thread stalls every other thread's commands; a hash needs no coordination
   * between worker hosts. Keep the range clear of the host's users and of subordinate-uid ranges.
   * @default { base: 100000, count: 65536 }
   */
  uidRange: { base: number; count: number };
  limits: SandboxLimits;
}
