/**
 * Each thread's own uid under a root worker (decisions 0325 and 0460). The kernel counts the
 * process limit (`ulimit -u`, RLIMIT_NPROC) per uid, across the whole host: threads whose commands
 * share a uid share that budget, and one thread's fork flood leaves the others `fork: retry`. So a
 * workspace's commands run as a uid no other workspace has: the registry beside the workspaces
 * gives each its own, and the workspace directory's owner records that it was handed over.
 */
import { createHash, randomUUID } from 'node:crypto';
import { chown, link, lstat, mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';

export interface UidRange {
  base: number;
  count: number;
}

/**
 * Where the probe for the workspace named `name` (its directory's name, `<thread_id>` or
 * `<thread_id>~<scope>`) starts: a hash of the name into the range, the same on every worker host.
 */
export function uidOfWorkspace(name: string, range: UidRange): number {
  const digest = createHash('sha256').update(name).digest();
  return range.base + (digest.readUIntBE(0, 6) % range.count);
}

/**
 * The uids given to workspaces, in `.uids/` beside them (`KEEL_WORKSPACES_DIR`, shared by every
 * worker host of a cluster), so that no two workspaces share one and a workspace keeps its uid:
 * - `by-uid/<uid>` names the workspace the uid is given to. It is made by `link(2)` of a complete
 *   file, which fails if the entry exists, so of two hosts claiming one uid at once exactly one
 *   gets it, and no reader sees half an entry. An entry is never changed or removed.
 * - A workspace's uid is the first, from its hash on through the range, whose entry is free or
 *   names it. Every host probes in the same order, so all agree.
 * - `by-name/<workspace>` remembers the answer, so a later call reads one file; it is only a
 *   shortcut: `by-uid/` decides.
 * A workspace keeps its uid when the operator changes the range: the range places new ones.
 * An entry goes only when its workspace is reclaimed (its thread deleted, decision 0542): after
 * the workspace's processes and files are gone, so the uid's next workspace inherits nothing.
 */
export class UidRegistry {
  readonly #range: UidRange;
  /** Answers already found: an entry never changes. */
  readonly #known = new Map<string, number>();

  constructor(range: UidRange) {
    this.#range = range;
  }

  /** The uid of the workspace directory `workspace`, registered beside it on first use. */
  async uidOf(workspace: string): Promise<number> {
    const known = this.#known.get(workspace);
    if (known !== undefined) return known;
    const uid = await this.#find(path.dirname(workspace), path.basename(workspace));
    this.#known.set(workspace, uid);
    return uid;
  }

  /** The uid remembered for `workspace` (its shortcut), if any; registers none. */
  async registered(workspace: string): Promise<number | undefined> {
    const remembered = await readFile(
      this.#entry(workspace, 'by-name', path.basename(workspace)),
      'utf8',
    ).catch(() => '');
    return /^\d+$/.test(remembered) ? Number(remembered) : undefined;
  }

  /** The uid whose entry names `workspace` (the uid is its alone), if its shortcut leads to one. */
  async owned(workspace: string): Promise<number | undefined> {
    const uid = await this.registered(workspace);
    if (uid === undefined) return undefined;
    const owner = await readFile(this.#entry(workspace, 'by-uid', String(uid)), 'utf8').catch(() => '');
    return owner === path.basename(workspace) ? uid : undefined;
  }

  /**
   * Frees the uid of `workspace` (whose processes and files are gone): its shortcut first, then
   * its entry — only if the entry names it — so no host finds the uid by the name once another
   * workspace may claim it. Returns the uid freed.
   */
  async release(workspace: string): Promise<number | undefined> {
    const uid = await this.owned(workspace);
    this.#known.delete(workspace);
    await rm(this.#entry(workspace, 'by-name', path.basename(workspace)), { force: true });
    if (uid !== undefined) await rm(this.#entry(workspace, 'by-uid', String(uid)), { force: true });
    return uid;
  }

  #entry(workspace: string, kind: 'by-name' | 'by-uid', key: string): string {
    return path.join(path.dirname(workspace), '.uids', kind, key);
  }

  /** Forgets this process's answer for `workspace`: its directory is not its uid's, so ask again. */
  forget(workspace: string): void {
    this.#known.delete(workspace);
  }

  async #find(workspaces: string, name: string): Promise<number> {
    const root = path.join(workspaces, '.uids');
    const remembered = await this.registered(path.join(workspaces, name));
    if (remembered !== undefined) return remembered;
    for (const dir of ['by-uid', 'by-name', 'new'])
      await mkdir(path.join(root, dir), { recursive: true, mode: 0o700 });
    const { base, count } = this.#range;
    const start = uidOfWorkspace(name, this.#range) - base;
    for (let step = 0; step < count; step += 1) {
      const uid = base + ((start + step) % count);
      if (await this.#claim(root, uid, name)) {
        await writeWhole(root, path.join(root, 'by-name', name), String(uid), true);
        return uid;
      }
    }
    throw new Error(
      `no sandbox uid is free in [${base}, ${base + count}) (KEEL_SANDBOX_UID_BASE, KEEL_SANDBOX_UID_COUNT)`,
    );
  }

  /** Whether `uid` is `name`'s: given to it now, or before by this or another host. */
  async #claim(root: string, uid: number, name: string): Promise<boolean> {
    const entry = path.join(root, 'by-uid', String(uid));
    if (await writeWhole(root, entry, name, false)) return true;
    // Taken: by this workspace (another host, a moment ago) or another. An unreadable entry
    // is someone's.
    return (await readFile(entry, 'utf8').catch(() => '')) === name;
  }
}

/**
 * Writes `text` to `target` whole and durable: into a file of its own under `new/`, flushed, then
 * renamed over `target` when `replace`, else linked to it (false if `target` exists).
 */
async function writeWhole(root: string, target: string, text: string, replace: boolean): Promise<boolean> {
  const draft = path.join(root, 'new', randomUUID());
  const handle = await open(draft, 'wx', 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  if (replace) {
    await rename(draft, target);
    return true;
  }
  try {
    await link(draft, target);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await rm(draft, { force: true });
  }
}

/**
 * Changes the owner of what `from` owns in `workspace` to `to`, without following a link (the
 * thread's commands control the tree). Runs inside a sandbox (./sandbox.ts `handOverCommand`).
 */
export type HandOver = (workspace: string, from: number, to: number) => Promise<void>;

/** Finds, and hands over once, each workspace's uid. */
export class WorkspaceOwners {
  readonly #registry: UidRegistry;
  readonly #legacyUid: number;
  readonly #handOver: HandOver;
  /** Hand-overs under way in this process, so parallel calls of one thread wait for the same one. */
  readonly #handing = new Map<string, Promise<void>>();

  constructor(range: UidRange, legacyUid: number, handOver: HandOver) {
    this.#registry = new UidRegistry(range);
    this.#legacyUid = legacyUid;
    this.#handOver = handOver;
  }

  /** The uid `workspace`'s commands run as; a workspace not yet its uid's is handed over first. */
  async uidFor(workspace: string): Promise<number> {
    let uid = await this.#registry.uidOf(workspace);
    // The workspace directory itself is the worker's: a command sees it only as its mount point.
    const owner = (await lstat(workspace)).uid;
    if (owner === uid) return uid;
    // Not its uid's: a new workspace, or one made again after its thread was deleted and its uid
    // given to another (another host may have reclaimed it): this process's answer may be stale.
    this.#registry.forget(workspace);
    uid = await this.#registry.uidOf(workspace);
    if (owner === uid) return uid;
    let handing = this.#handing.get(workspace);
    if (handing === undefined) {
      handing = this.#take(workspace, owner, uid).finally(() => this.#handing.delete(workspace));
      this.#handing.set(workspace, handing);
    }
    await handing;
    return uid;
  }

  /** The uid given to `workspace` alone, if any (none is claimed). */
  owned(workspace: string): Promise<number | undefined> {
    return this.#registry.owned(workspace);
  }

  /** Frees `workspace`'s uid, once its processes and files are gone (decision 0542). */
  release(workspace: string): Promise<number | undefined> {
    return this.#registry.release(workspace);
  }

  async #take(workspace: string, owner: number, uid: number): Promise<void> {
    // A new workspace is root's and empty. One from before decision 0325 is the old uid's, and so
    // is what the file tools handed over in it; one from before decision 0460 (or another range)
    // is the uid its hash gave it.
    const from = owner === 0 ? this.#legacyUid : owner;
    if (owner !== 0 || (await readdir(workspace)).length > 0) await this.#handOver(workspace, from, uid);
    // Last: the directory's owner says the tree was handed over.
    await chown(workspace, uid, uid);
  }
}
