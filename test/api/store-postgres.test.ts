/**
 * The Store on PostgreSQL, as `keel up --cluster` and docker-compose would run it: a private
 * cluster made with `initdb` from the machine's packages (as launch/cluster/postgres.ts makes
 * Temporal's), the same Store code over the `pg` adapter. Migrations run once however often the
 * store opens; the full-text index ranks; TTLs expire; owners stay apart; and a canary in a value
 * is in no file of the cluster's directory, its WAL included. And the API on it answers
 * LangGraph's SDKs (JS and Python) as it does on SQLite, keeps their items across a restart, and
 * ranks their `query` by meaning with an embeddings provider.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { Client } from '@langchain/langgraph-sdk';
import type { Client as TemporalClient } from '@temporalio/client';
import type { RunningApi } from '../../api/server';
import type { EncryptionKey } from '../../codec/aes-gcm-codec';
import { preparePostgres, waitForPostgres } from '../../launch/cluster/postgres';
import { createEmbedder } from '../../store/embeddings';
import type { Store } from '../../store/store';
import { startEmbeddingsFake } from '../fakes/embeddings-server';
import { freePort, startTestApi } from '../helpers/api';
import { hasPython } from '../helpers/python-sdk';
import {
  ownersApartThroughTheJsSdk,
  storeCallsOfThePythonSdk,
  storeCallsOfTheJsSdk,
} from '../helpers/store-sdks';
import { closeTestClient, testClient, testConfig } from '../helpers/temporal';
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

  describe("the API on it, through LangGraph's SDKs", () => {
    const aliceToken = 'alice-0123456789abcdef';
    const bobToken = 'bob-0123456789abcdef0';
    let temporal: TemporalClient;
    const apis: RunningApi[] = [];
    let apiUrl: string;
    /** An API whose Store is a database of its own on this cluster, as keel up --cluster's keel_store. */
    const startApiOnPostgres = async (env: Record<string, string> = {}) => {
      const api = await startTestApi(
        temporal,
        await testConfig({
          KEEL_API_TOKENS: `alice:${aliceToken},bob:${bobToken}`,
          KEEL_STORE_URL: apiUrl,
          ...env,
        }),
      );
      apis.push(api);
      return {
        api,
        alice: new Client({ apiUrl: api.url, apiKey: aliceToken }),
        bob: new Client({ apiUrl: api.url, apiKey: bobToken }),
      };
    };

    beforeAll(async () => {
      temporal = await testClient();
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query('CREATE DATABASE keel_store');
      await client.end();
      apiUrl = url.replace(/\/postgres$/, '/keel_store');
    });

    afterAll(async () => {
      for (const api of apis) await api.stop();
      await closeTestClient();
    });

    let first: Awaited<ReturnType<typeof startApiOnPostgres>>;
    beforeAll(async () => {
      first = await startApiOnPostgres();
    });

    it('answers the JS SDK as on SQLite: put, get, search, namespaces, delete', () =>
      storeCallsOfTheJsSdk(first.alice));

    it("keeps one owner's items from another through the JS SDK", () =>
      ownersApartThroughTheJsSdk(first.alice, first.bob));

    (hasPython ? it : it.skip)(
      "answers LangGraph's Python SDK, unmodified",
      () => storeCallsOfThePythonSdk(first.api.url, aliceToken),
      300_000,
    );

    it('keeps the items across a restart of the API, and ranks a query by meaning once an embedder is set', async () => {
      const kept = ['kept', randomUUID()];
      await first.alice.store.putItem(kept, 'tea', { text: 'oolong, no milk' });
      // In this cluster's keel_store database, not in a SQLite file of the API's data dir.
      const database = new pg.Client({ connectionString: apiUrl });
      await database.connect();
      const { rows } = await database.query<{ key: string }>("SELECT key FROM store_items WHERE key = 'tea'");
      await database.end();
      expect(rows).toHaveLength(1);
      await first.api.stop();
      apis.splice(apis.indexOf(first.api), 1);
      const fake = await startEmbeddingsFake();
      try {
        const again = await startApiOnPostgres({
          KEEL_STORE_EMBED: 'ollama:nomic-embed-text',
          OLLAMA_HOST: fake.url,
        });
        expect((await again.alice.store.getItem(kept, 'tea'))?.value).toEqual({ text: 'oolong, no milk' });
        expect(await again.bob.store.getItem(kept, 'tea')).toBeNull();
        const meant = ['meant', randomUUID()];
        await again.alice.store.putItem(meant, 'espresso', { text: 'A double espresso, dark roast' });
        await again.alice.store.putItem(meant, 'puppy', { text: 'Long walks with the puppy' });
        await again.alice.store.putItem(meant, 'latte', { text: 'Latte on Fridays' }, { index: false });
        const found = await again.alice.store.searchItems(meant, { query: 'coffee please', limit: 5 });
        expect(found.items.map((item) => item.key)).toEqual(['espresso', 'puppy']);
        expect(found.items[0]!.score).toBeGreaterThan(0.9);
        expect(found.items[1]!.score).toBeLessThan(0.2);
        expect(fake.requests.some((request) => request.input.some((text) => text.includes('Latte')))).toBe(
          false,
        );
      } finally {
        for (const running of apis.splice(0)) await running.stop();
        await fake.close();
      }
    });
  });
});
