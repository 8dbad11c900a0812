/**
 * The Store on PostgreSQL, as `keel up --cluster` and docker-compose would run it: a private
 * cluster made with `initdb` from the machine's packages (as launch/cluster/postgres.ts makes
 * Temporal's), the same Store code over the `pg` adapter. Migrations run once however often the
 * store opens; the full-text index ranks; TTLs expire; owners stay apart; and a canary in a value
 * is in no file of the cluster's directory, its WAL included.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { EncryptionKey } from '../../codec/aes-gcm-codec';
import { preparePostgres, waitForPostgres } from '../../launch/cluster/postgres';
import { createEmbedder } from '../../store/embeddings';
import type { Store } from '../../store/store';
import { startEmbeddingsFake } from '../fakes/embeddings-server';
import { freePort } from '../helpers/api';
import { searchStore, storeOpener } from '../helpers/store';

// Debian's PostgreSQL is required, as for the cluster's tests (.ci/run installs it when missing).
describe('the Store on PostgreSQL', () => {
  let directory: string;
  let server: ChildProcess;
  let url: string;
  const keys: EncryptionKey[] = [{ id: 'k1', key: randomBytes(32) }];
  let now = Date.parse('2026-11-27T12:00:00Z');
  const { stores, open } = storeOpener({ config: () => ({ kind: 'postgres', url }), keys, now: () => now });

  beforeAll(async () => {
    directory = await mkdtemp(path.join(os.tmpdir(), 'keel-store-pg-'));
    const port = await freePort();
    const password = randomUUID();
    const command = await preparePostgres({
      directory: path.join(directory, 'cluster', 'postgresql'),
      port,
      user: 'keel',
      password,
      searchPath: process.env.PATH,
    });
    server = spawn(command.command, command.args, { stdio: 'ignore' });
    await waitForPostgres(port, 30_000, () => server.exitCode === null, process.env.PATH);
    url = `postgres://keel:${password}@127.0.0.1:${port}/postgres`;
  }, 60_000);

  afterAll(async () => {
    for (const store of stores) await store.close();
    if (server !== undefined && server.exitCode === null) {
      const exited = new Promise((resolve) => server.once('exit', resolve));
      // SIGINT: PostgreSQL's fast shutdown.
      server.kill('SIGINT');
      await exited;
    }
    await rm(directory, { recursive: true, force: true });
  });

  it('migrates once, ranks by the full-text index, filters, lists, expires, keeps owners apart and seals values', async () => {
    const store = open();
    const canary = `canary${randomUUID().replaceAll('-', '')}`;
    const put = (
      owner: string,
      namespace: string[],
      key: string,
      value: Record<string, unknown>,
      ttl: number | null = null,
    ) => store.put({ owner, namespace, key, value, index: null, ttl });
    await put('alice', ['memories', 'u1'], 'food', { text: `spicy ramen, spicy curry ${canary}`, rating: 5 });
    now += 1;
    await put('alice', ['memories', 'u1'], 'drink', { text: 'green tea, not spicy', rating: 3 });
    now += 1;
    await put('alice', ['memories', 'u1', 'work'], 'brief', { text: 'standup at nine' }, 1);
    await put('bob', ['memories', 'u1'], 'food', { text: 'spicy everything' });

    const search = (input: Partial<Parameters<Store['search']>[0]>) =>
      searchStore(store, 'alice', ['memories'], input);
    const ranked = await search({ query: 'spicy' });
    expect(ranked.map((item) => item.key)).toEqual(['food', 'drink']);
    expect(ranked[0]!.score).toBeGreaterThan(ranked[1]!.score!);
    expect((await search({ query: canary })).map((item) => item.value.rating)).toEqual([5]);
    expect((await search({ filter: { rating: { $lt: 5 } } })).map((item) => item.key)).toEqual(['drink']);
    expect((await search({})).map((item) => item.key)).toEqual(['brief', 'drink', 'food']);
    expect(
      await store.listNamespaces({
        owner: 'alice',
        prefix: ['memories'],
        suffix: null,
        maxDepth: null,
        limit: 10,
        offset: 0,
      }),
    ).toEqual([
      ['memories', 'u1'],
      ['memories', 'u1', 'work'],
    ]);
    expect(
      (await store.get({ owner: 'bob', namespace: ['memories', 'u1'], key: 'food', refreshTtl: false }))
        ?.value,
    ).toEqual({
      text: 'spicy everything',
    });
    expect(
      await store.search({
        owner: 'carol',
        prefix: [],
        filter: null,
        query: 'spicy',
        limit: 10,
        offset: 0,
        refreshTtl: false,
      }),
    ).toEqual([]);

    const brief = (refreshTtl: boolean) =>
      store.get({ owner: 'alice', namespace: ['memories', 'u1', 'work'], key: 'brief', refreshTtl });
    now += 30_000;
    expect(await brief(true)).not.toBeNull();
    now += 45_000;
    expect(await brief(false)).not.toBeNull();
    now += 30_000;
    expect(await brief(false)).toBeNull();

    // A second store on the same database finds its tables made and its migrations recorded once.
    const again = open();
    expect(
      (await again.get({ owner: 'alice', namespace: ['memories', 'u1'], key: 'food', refreshTtl: false }))
        ?.value.rating,
    ).toBe(5);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query<{ version: number }>(
      'SELECT version FROM store_migrations ORDER BY version',
    );
    // Everything PostgreSQL wrote so far is on disk, WAL included, before the files are read.
    await client.query('CHECKPOINT');
    await client.end();
    expect(rows.map((row) => row.version)).toEqual([1, 2]);

    const entries = await readdir(directory, { recursive: true, withFileTypes: true });
    const files = entries
      .filter((entry) => entry.isFile())
      .map((entry) => path.join(entry.parentPath, entry.name));
    expect(files.length).toBeGreaterThan(100);
    const contents = await Promise.all(files.map((file) => readFile(file).catch(() => Buffer.alloc(0))));
    expect(contents.filter((bytes) => bytes.includes(canary))).toEqual([]);
    // The scan sees what is written in plaintext: the namespaces, which are.
    expect(contents.some((bytes) => bytes.includes('memories'))).toBe(true);
  });

  it('ranks by meaning with an embeddings provider, its vectors sealed in a BYTEA column', async () => {
    const fake = await startEmbeddingsFake();
    try {
      const store = open(keys, {
        embedder: createEmbedder({
          provider: 'ollama',
          model: 'nomic-embed-text',
          url: fake.url,
          apiKey: undefined,
        }),
      });
      for (const [key, text] of [
        ['k1', 'Matcha or chai in the afternoon'],
        ['k2', 'A double espresso, dark roast'],
        ['k3', 'Long walks with the puppy'],
      ])
        await store.put({
          owner: 'dana',
          namespace: ['memories'],
          key: key!,
          value: { text },
          index: null,
          ttl: null,
        });
      const found = await store.search({
        owner: 'dana',
        prefix: ['memories'],
        filter: null,
        query: 'coffee',
        limit: 2,
        offset: 0,
        refreshTtl: false,
      });
      expect(found.map((item) => item.key)).toHaveLength(2);
      expect(found[0]).toMatchObject({ key: 'k2', value: { text: 'A double espresso, dark roast' } });
      expect(found[0]!.score).toBeGreaterThan(0.9);
      expect(found[1]!.score).toBeLessThan(0.2);
    } finally {
      await fake.close();
    }
  });
});
