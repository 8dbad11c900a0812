/**
 * Descriptors beneath a workspace: the file tools never open a workspace path by name. They hold
 * a descriptor of the workspace root and walk a path one component at a time, each opened
 * relative to the directory before it with `O_NOFOLLOW`, so a symlink anywhere is refused and a
 * concurrent rename (the sandboxed command swapping a directory for a link) can only make a walk
 * fail, never take it outside. Node has no `openat`; on Linux `/proc/self/fd/<fd>/<name>` is one:
 * the kernel jumps to the directory the descriptor holds, whatever its name is now, and looks
 * `name` up there (decision 0320).
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open, opendir, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { FileRefused, WorkspaceViolation } from '../errors';

const { O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK, O_NOCTTY } =
  constants;

const directoryFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
// O_NONBLOCK: opening a FIFO never waits for a writer on a threadpool thread (it is refused by
// its fstat right after); O_NOCTTY: a terminal never becomes the worker's.
const fileFlags = O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;

/** How a file is opened: read, rewrite in place (edit), or create-or-truncate (write). */
export type FileMode = 'read' | 'edit' | 'write';

/** The components of a workspace-relative path; `..`, absolute paths and NUL bytes are refused. */
export function segmentsOf(requested: string): string[] {
  if (requested.includes('\0')) throw new WorkspaceViolation(requested, 'contains a NUL byte');
  if (requested.startsWith('/')) throw new WorkspaceViolation(requested, 'is absolute');
  const segments = requested.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..')) throw new WorkspaceViolation(requested, 'goes up with ".."');
  return segments;
}

/** The path as the model should see it: relative to the workspace. */
export function shown(segments: readonly string[]): string {
  return segments.length === 0 ? '.' : segments.join('/');
}

function codeOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** What a stat says about a file, for a refusal. */
export function kindOf(info: Stats): string {
  if (info.isFile()) return 'a regular file';
  if (info.isDirectory()) return 'a directory';
  if (info.isSymbolicLink()) return 'a symbolic link';
  if (info.isFIFO()) return 'a FIFO';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

/** A workspace root held open, and every descriptor opened beneath it until `close`. */
export class Beneath {
  readonly #root: FileHandle;
  readonly #opened: FileHandle[] = [];
  /** The sandbox's uid on the host: what this creates is handed to it by descriptor. */
  readonly #owner: number | undefined;

  private constructor(root: FileHandle, owner: number | undefined) {
    this.#root = root;
    this.#owner = owner;
  }

  /** Opens `workspace` (a realpath the worker made; its parent is not the sandbox's to change). */
  static async open(workspace: string, owner: number | undefined): Promise<Beneath> {
    return new Beneath(await open(workspace, directoryFlags), owner);
  }

  get root(): FileHandle {
    return this.#root;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.#opened, this.#root].map((handle) => handle.close()));
  }

  /** `name` in the directory `parent` holds, as a path the kernel resolves relative to it. */
  static at(parent: FileHandle, name?: string): string {
    return name === undefined ? `/proc/self/fd/${parent.fd}` : `/proc/self/fd/${parent.fd}/${name}`;
  }

  async #track(opening: Promise<FileHandle>): Promise<FileHandle> {
    const handle = await opening;
    this.#opened.push(handle);
    return handle;
  }

  /** Why `name` in `parent` could not be opened as `wanted`, in words for the model. */
  async #refusal(
    parent: FileHandle,
    name: string,
    segments: readonly string[],
    wanted: 'directory' | 'file',
    error: unknown,
  ): Promise<never> {
    const where = shown(segments);
    const code = codeOf(error);
    if (code === 'ENOENT') throw new FileRefused(where, 'does not exist');
    if (code === 'ELOOP' || code === 'ENOTDIR' || code === 'ENXIO' || code === 'EISDIR') {
      const info = await lstat(Beneath.at(parent, name)).catch(() => undefined);
      if (info?.isSymbolicLink() === true)
        throw new WorkspaceViolation(where, 'is a symbolic link, which the file tools do not follow');
      // What it is now is what was wanted: a link was there a moment ago (swapped in and out).
      const asWanted = wanted === 'directory' ? info?.isDirectory() : info?.isFile();
      if (info === undefined || asWanted === true)
        throw new FileRefused(
          where,
          'changed while it was opened (a symbolic link came and went); try again',
        );
      throw new FileRefused(where, `is ${kindOf(info)}`);
    }
    throw new FileRefused(where, `could not be opened (${code ?? 'unknown error'})`);
  }

  /** Opens the child directory `name` of `parent`, never through a link. */
  async child(parent: FileHandle, name: string, segments: readonly string[]): Promise<FileHandle> {
    try {
      return await this.#track(open(Beneath.at(parent, name), directoryFlags));
    } catch (error) {
      return this.#refusal(parent, name, segments, 'directory', error);
    }
  }

  /**
   * The directory at `segments`, walked from the root; with `create`, missing ones are made
   * (and handed to the owner through their descriptor).
   */
  async directory(segments: readonly string[], options: { create?: boolean } = {}): Promise<FileHandle> {
    let current = this.#root;
    for (const [index, name] of segments.entries()) {
      const here = segments.slice(0, index + 1);
      if (options.create === true) {
        const made = await mkdir(Beneath.at(current, name), 0o755).then(
          () => true,
          (error: unknown) => {
            if (codeOf(error) === 'EEXIST') return false;
            throw new FileRefused(shown(here), `could not be created (${codeOf(error) ?? 'unknown error'})`);
          },
        );
        const next = await this.child(current, name, here);
        if (made && this.#owner !== undefined) await next.chown(this.#owner, this.#owner);
        current = next;
      } else current = await this.child(current, name, here);
    }
    return current;
  }

  /**
   * The regular file at `segments`, opened for `mode`, with its stat. Anything but a regular file
   * with one link is refused after its open (a FIFO opens without blocking); `write` creates the
   * file, and its parents, when missing, and truncates it.
   */
  async file(segments: readonly string[], mode: FileMode): Promise<{ handle: FileHandle; info: Stats }> {
    if (segments.length === 0) throw new FileRefused('.', 'is the workspace directory');
    const parent = await this.directory(segments.slice(0, -1), { create: mode === 'write' });
    const name = segments.at(-1)!;
    const access = mode === 'read' ? O_RDONLY : mode === 'edit' ? O_RDWR : O_WRONLY;
    let handle: FileHandle | undefined;
    if (mode === 'write') {
      handle = await this.#track(
        open(Beneath.at(parent, name), access | fileFlags | O_CREAT | O_EXCL, 0o644),
      ).catch((error: unknown) =>
        codeOf(error) === 'EEXIST' ? undefined : this.#refusal(parent, name, segments, 'file', error),
      );
    }
    handle ??= await this.#track(open(Beneath.at(parent, name), access | fileFlags)).catch((error: unknown) =>
      this.#refusal(parent, name, segments, 'file', error),
    );
    const info = await handle.stat();
    if (!info.isFile()) throw new FileRefused(shown(segments), `is ${kindOf(info)}, not a regular file`);
    // A second link could name a file outside the workspace: never write or hand it over.
    if (mode !== 'read' && info.nlink > 1)
      throw new FileRefused(shown(segments), 'has other hard links; the file tools do not change those');
    if (mode === 'write') await handle.truncate(0);
    if (mode !== 'read' && this.#owner !== undefined && info.uid !== this.#owner)
      await handle.chown(this.#owner, this.#owner);
    return { handle, info };
  }

  /** Deletes the file or empty directory at `segments`, by name relative to its parent's descriptor. */
  async remove(segments: readonly string[]): Promise<void> {
    if (segments.length === 0) throw new FileRefused('.', 'is the workspace itself, which cannot be deleted');
    const parent = await this.directory(segments.slice(0, -1));
    const name = segments.at(-1)!;
    const where = Beneath.at(parent, name);
    const info = await lstat(where).catch(() => undefined);
    if (info === undefined) throw new FileRefused(shown(segments), 'does not exist');
    try {
      await (info.isDirectory() ? rmdir(where) : unlink(where));
    } catch (error) {
      const code = codeOf(error);
      if (code === 'ENOTEMPTY' || code === 'EEXIST')
        throw new FileRefused(shown(segments), 'is a directory that is not empty');
      if (code === 'ENOENT') throw new FileRefused(shown(segments), 'does not exist');
      throw new FileRefused(shown(segments), `could not be deleted (${code ?? 'unknown error'})`);
    }
  }

  /**
   * Entries of the directory `handle` holds, in the order the kernel gives them, at most `max`:
   * names and whether each is a directory (its own type, never a link's target).
   */
  static async entries(handle: FileHandle, max: number): Promise<{ name: string; directory: boolean }[]> {
    const found: { name: string; directory: boolean }[] = [];
    const directory = await opendir(Beneath.at(handle), { bufferSize: 64 });
    try {
      for await (const entry of directory) {
        found.push({ name: entry.name, directory: entry.isDirectory() });
        if (found.length >= max) break;
      }
    } finally {
      await directory.close().catch(() => undefined);
    }
    return found;
  }
}
