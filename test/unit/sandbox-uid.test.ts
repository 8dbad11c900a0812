/**
 * The registry of sandbox uids (decision 0460): no two workspaces share a uid — not by a hash
 * collision, not by a thread id picked to collide, not when hosts claim at once — and a workspace
 * keeps its uid when the operator changes the range.
 */
import { chown, lstat, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { UidRegistry, uidOfWorkspace, WorkspaceOwners } from '../../activities/tools/sandbox-uid';

async function workspacesDir(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), 'keel-uids-'));
}

async function workspace(dir: string, name: string): Promise<string> {
  const directory = path.join(dir, name);
  await mkdir(directory, { recursive: true });
  return directory;
}

/** `n` names whose hashes all land on one uid of `range`. */
function collidingNames(range: { base: number; count: number }, n: number): string[] {
  const names: string[] = [];
  const target = uidOfWorkspace('thread-0', range);
  for (let i = 0; names.length < n; i += 1) {
    if (uidOfWorkspace(`thread-${i}`, range) === target) names.push(`thread-${i}`);
  }
  return names;
}

describe('the sandbox uid registry', () => {
  it('gives workspaces whose hashes collide uids of their own', async () => {
    const range = { base: 200_000, count: 64 };
    const names = collidingNames(range, 5);
    expect(new Set(names.map((name) => uidOfWorkspace(name, range))).size).toBe(1);
    const dir = await workspacesDir();
    const registry = new UidRegistry(range);
    const uids = await Promise.all(names.map(async (name) => registry.uidOf(await workspace(dir, name))));
    expect(new Set(uids).size).toBe(5);
    for (const uid of uids) expect(uid).toBeGreaterThanOrEqual(range.base);
    for (const uid of uids) expect(uid).toBeLessThan(range.base + range.count);
    // The first to ask keeps the hash's uid: a workspace from before the registry keeps its owner.
    expect(await new UidRegistry(range).uidOf(path.join(dir, names[0]!))).toBe(uids[0]);
  });

  it('agrees across hosts claiming at once, and never gives one uid twice', async () => {
    const range = { base: 300_000, count: 24 };
    const dir = await workspacesDir();
    const names = Array.from({ length: 20 }, (_, i) => `race-${i}`);
    await Promise.all(names.map((name) => workspace(dir, name)));
    // Twelve "hosts" (registries share nothing but the directory), each asking for every name in
    // its own order, all at once.
    const hosts = Array.from({ length: 12 }, () => new UidRegistry(range));
    const answers = await Promise.all(
      hosts.map((host, h) =>
        Promise.all(
          names
            .map((_, i) => names[(i * 7 + h) % names.length]!)
            .map(async (name) => [name, await host.uidOf(path.join(dir, name))] as const),
        ),
      ),
    );
    const uidByName = new Map<string, number>();
    for (const [name, uid] of answers.flat()) {
      expect(uidByName.get(name) ?? uid).toBe(uid);
      uidByName.set(name, uid);
    }
    expect(uidByName.size).toBe(20);
    expect(new Set(uidByName.values()).size).toBe(20);
    const entries = await readdir(path.join(dir, '.uids', 'by-uid'));
    expect(entries).toHaveLength(20);
    for (const entry of entries) {
      expect(uidByName.get(await readFile(path.join(dir, '.uids', 'by-uid', entry), 'utf8'))).toBe(
        Number(entry),
      );
    }
    // No draft is left behind.
    expect(await readdir(path.join(dir, '.uids', 'new'))).toEqual([]);
  });

  it('keeps a workspace its uid when the range changes (a rolling deploy does not flip it)', async () => {
    const dir = await workspacesDir();
    const ws = await workspace(dir, 'rolling');
    const before = await new UidRegistry({ base: 100_000, count: 65_536 }).uidOf(ws);
    const after = await new UidRegistry({ base: 500_000, count: 1_000 }).uidOf(ws);
    expect(after).toBe(before);
    // A new workspace takes the new range.
    const fresh = await new UidRegistry({ base: 500_000, count: 1_000 }).uidOf(await workspace(dir, 'fresh'));
    expect(fresh).toBeGreaterThanOrEqual(500_000);
  });

  it('refuses clearly when the range is full', async () => {
    const dir = await workspacesDir();
    const registry = new UidRegistry({ base: 400_000, count: 2 });
    await registry.uidOf(await workspace(dir, 'a'));
    await registry.uidOf(await workspace(dir, 'b'));
    await expect(registry.uidOf(await workspace(dir, 'c'))).rejects.toThrow(
      /no sandbox uid is free in \[400000, 400002\)/,
    );
  });

  it("gives a released workspace's uid to the next workspace, and frees none that is another's", async () => {
    const dir = await workspacesDir();
    const range = { base: 700_000, count: 1 };
    const registry = new UidRegistry(range);
    const first = await workspace(dir, 'deleted-thread');
    expect(await registry.uidOf(first)).toBe(700_000);
    await expect(registry.uidOf(await workspace(dir, 'waiting'))).rejects.toThrow(/no sandbox uid is free/);
    // Another host releases it (the thread was deleted there).
    expect(await new UidRegistry(range).release(first)).toBe(700_000);
    expect(await registry.owned(first)).toBeUndefined();
    expect(await new UidRegistry(range).uidOf(path.join(dir, 'waiting'))).toBe(700_000);
    // A shortcut naming another workspace's uid (forged, as the isolation control does) frees nothing.
    await writeFile(path.join(dir, '.uids', 'by-name', 'deleted-thread'), '700000');
    expect(await registry.release(first)).toBeUndefined();
    expect(await readFile(path.join(dir, '.uids', 'by-uid', '700000'), 'utf8')).toBe('waiting');
  });

  it('asks the registry again for a workspace made anew after its uid went to another', async () => {
    const dir = await workspacesDir();
    const range = { base: 710_000, count: 2 };
    const owners = new WorkspaceOwners(range, 65_534, () => Promise.resolve());
    const reused = await workspace(dir, 'reused-id');
    const before = await owners.uidFor(reused);
    // Deleted on another host, its uid given to another workspace there; the id is then reused.
    await new UidRegistry(range).release(reused);
    await rm(reused, { recursive: true });
    const other = await new UidRegistry(range).uidOf(await workspace(dir, 'took-it'));
    expect(other).toBe(before);
    await mkdir(reused);
    const after = await owners.uidFor(reused);
    expect(after).not.toBe(before);
    expect((await lstat(reused)).uid).toBe(after);
  });

  it('hands a workspace from before the registry over from the uid its hash gave it, once', async () => {
    const range = { base: 600_000, count: 64 };
    const [first, second] = collidingNames(range, 2);
    const hashed = uidOfWorkspace(first!, range);
    const dir = await workspacesDir();
    // Before the registry both workspaces ran as their hash's uid, and their files are its.
    for (const name of [first!, second!]) {
      const ws = await workspace(dir, name);
      await writeFile(path.join(ws, 'notes.txt'), name);
      await chown(path.join(ws, 'notes.txt'), hashed, hashed);
      await chown(ws, hashed, hashed);
    }
    const handOvers: Array<[string, number, number]> = [];
    const owners = new WorkspaceOwners(range, 65_534, (ws, from, to) => {
      handOvers.push([path.basename(ws), from, to]);
      return Promise.resolve();
    });
    expect(await owners.uidFor(path.join(dir, first!))).toBe(hashed);
    const moved = await owners.uidFor(path.join(dir, second!));
    expect(moved).not.toBe(hashed);
    expect(await owners.uidFor(path.join(dir, second!))).toBe(moved);
    expect(handOvers).toEqual([[second, hashed, moved]]);
    expect((await lstat(path.join(dir, second!))).uid).toBe(moved);
  });
});
