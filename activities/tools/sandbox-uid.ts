/**
 * Each thread's own uid under a root worker (decision 0325). The kernel counts the process limit
 * (`ulimit -u`, RLIMIT_NPROC) per uid, across the whole host: threads whose commands share a uid
 * share that budget, and one thread's fork flood leaves the others `fork: retry`. So a workspace's
 * commands run as a uid of their own, hashed from the workspace's name into a range no one else
 * uses; the workspace directory's owner records that it was handed over.
 */
import { createHash } from 'node:crypto';
import { chown, lstat, readdir } from 'node:fs/promises';
import path from 'node:path';

export interface UidRange {
  base: number;
  count: number;
}

/**
 * The uid of the workspace named `name` (its directory's name, `<thread_id>` or
 * `<thread_id>~<scope>`): the same on every worker host, so two hosts handing one workspace over
 * at once agree.
 */
export function uidOfWorkspace(name: string, range: UidRange): number {
  const digest = createHash('sha256').update(name).digest();
  return range.base + (digest.readUIntBE(0, 6) % range.count);
}

/**
 * Changes the owner of what `from` owns in `workspace` to `to`, without following a link (the
 * thread's commands control the tree). Runs inside a sandbox (./sandbox.ts `handOverCommand`).
 */
export type HandOver = (workspace: string, from: number, to: number) => Promise<void>;

/** Finds, and hands over once, each workspace's uid. */
export class WorkspaceOwners {
  readonly #range: UidRange;
  readonly #legacyUid: number;
  readonly #handOver: HandOver;
  /** Hand-overs under way in this process, so parallel calls of one thread wait for the same one. */
  readonly #handing = new Map<string, Promise<void>>();

  constructor(range: UidRange, legacyUid: number, handOver: HandOver) {
    this.#range = range;
    this.#legacyUid = legacyUid;
    this.#handOver = handOver;
  }

  /** The uid `workspace`'s commands run as; a workspace not yet its uid's is handed over first. */
  async uidFor(workspace: string): Promise<number> {
    const uid = uidOfWorkspace(path.basename(workspace), this.#range);
    // The workspace directory itself is the worker's: a command sees it only as its mount point.
    const owner = (await lstat(workspace)).uid;
    if (owner === uid) return uid;
    let handing = this.#handing.get(workspace);
    if (handing === undefined) {
      handing = this.#take(workspace, owner, uid).finally(() => this.#handing.delete(workspace));
      this.#handing.set(workspace, handing);
    }
    await handing;
    return uid;
  }

  async #take(workspace: string, owner: number, uid: number): Promise<void> {
    // A new workspace is root's and empty. One from before decision 0325 (or from another range)
    // is the old uid's, and so is what the file tools handed over in it.
    const from = owner === 0 ? this.#legacyUid : owner;
    if (owner !== 0 || (await readdir(workspace)).length > 0) await this.#handOver(workspace, from, uid);
    // Last: the directory's owner says the tree was handed over.
    await chown(workspace, uid, uid);
  }
}
