/**
 * The Store's rules on a real SQLite file with a clock the test moves: a TTL counted in minutes
 * and restarted by reads that ask for it, filters as LangGraph's stores compare, the fields an
 * `index` names, namespaces by prefix, suffix and depth, and values sealed to their own row under
 * keys that rotate.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Database from 'libsql';
import type { EncryptionKey } from '../../codec/aes-gcm-codec';
import { StoreError } from '../../store/errors';
import type { Store } from '../../store/store';
import { parseStoreIndex, parseStoreUrl } from '../../platform/config';
import { searchStore, storeOpener } from '../helpers/store';

const key = (id: string): EncryptionKey => ({ id, key: randomBytes(32) });
const minute = 60_000;

describe('the Store', () => {
  let file: string;
  let now: number;
  const first = key('k1');
  const { stores, open } = storeOpener({
    config: () => ({ kind: 'sqlite', file }),
    keys: [first],
    now: () => now,
  });
  const owner = 'alice';
  const put = (
    store: Store,
    namespace: string[],
    itemKey: string,
    value: Record<string, unknown>,
    extra = {},
  ) => store.put({ owner, namespace, key: itemKey, value, index: null, ttl: null, ...extra });
  const get = (store: Store, namespace: string[], itemKey: string, refreshTtl = false) =>
    store.get({ owner, namespace, key: itemKey, refreshTtl });
  const search = (store: Store, input: Partial<Parameters<Store['search']>[0]> = {}) =>
    searchStore(store, owner, [], input);

  beforeEach(async () => {
    file = path.join(
      await mkdtemp(path.join(process.env.KEEL_TEST_DIR ?? os.tmpdir(), 'store-')),
      'store.db',
    );
    now = Date.parse('2026-11-27T12:00:00Z');
  });

  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
  });

  it('expires an item its TTL after the last write, or the last read that refreshed it', async () => {
    const store = open();
    await put(store, ['ttl'], 'read', { n: 1 }, { ttl: 1 });
    await put(store, ['ttl'], 'unread', { n: 2 }, { ttl: 1 });
    await put(store, ['ttl'], 'searched', { n: 3 }, { ttl: 1 });
    now += 0.5 * minute;
    expect(await get(store, ['ttl'], 'read', true)).not.toBeNull();
    expect((await search(store, { filter: { n: 3 }, refreshTtl: true })).map((item) => item.key)).toEqual([
      'searched',
    ]);
    now += 0.6 * minute;
    expect(await get(store, ['ttl'], 'unread')).toBeNull();
    expect(await get(store, ['ttl'], 'read')).not.toBeNull();
    expect(await get(store, ['ttl'], 'searched')).not.toBeNull();
    now += 0.5 * minute;
    expect(await get(store, ['ttl'], 'read')).toBeNull();
    expect((await search(store)).map((item) => item.key)).toEqual([]);
    // A store opening on the file deletes what expired, rows and terms.
    expect(await search(open())).toEqual([]);
    const raw = new Database(file);
    const counts = raw
      .prepare(
        'SELECT (SELECT count(*) FROM store_items) AS items, (SELECT count(*) FROM store_terms) AS terms',
      )
      .get();
    raw.close();
    expect(counts).toMatchObject({ items: 0, terms: 0 });
  });

  it('filters on value fields with equality, nested objects and the comparison operators', async () => {
    const store = open();
    await put(store, ['f'], 'a', { score: 4.5, color: 'red', meta: { lang: 'en', tags: ['x'] } });
    now += 1;
    await put(store, ['f'], 'b', { score: 2, color: 'blue', meta: { lang: 'fr', tags: ['y'] } });
    const keys = async (filter: Record<string, unknown>) =>
      (await search(store, { filter })).map((item) => item.key).sort();
    expect(await keys({ color: 'red' })).toEqual(['a']);
    expect(await keys({ score: { $gt: 2 } })).toEqual(['a']);
    expect(await keys({ score: { $gte: 2, $lt: 4.5 } })).toEqual(['b']);
    expect(await keys({ color: { $ne: 'red' } })).toEqual(['b']);
    expect(await keys({ meta: { lang: 'fr' } })).toEqual(['b']);
    expect(await keys({ meta: { tags: ['x'] } })).toEqual(['a']);
    expect(await keys({ missing: { $eq: null } })).toEqual([]);
    // A filter that keeps few items still pages over those it keeps.
    for (let index = 0; index < 250; index++) {
      now += 1;
      await put(store, ['many'], `item-${index}`, { even: index % 2 === 0, index });
    }
    const page = await search(store, { prefix: ['many'], filter: { even: true }, limit: 3, offset: 100 });
    expect(page.map((item) => item.value.index)).toEqual([48, 46, 44]);
  });

  it('indexes the fields `index` names, all of them by default, none with false', async () => {
    const store = open();
    const value = {
      title: 'Quarterly plan',
      author: { name: 'Grace' },
      tags: ['budget', 'q3'],
      body: 'hidden words',
    };
    await put(store, ['docs'], 'all', value);
    await put(store, ['docs'], 'some', value, { index: ['title', 'author.name', 'tags[*]'] });
    await put(store, ['docs'], 'none', value, { index: false });
    const found = async (query: string) => (await search(store, { query })).map((item) => item.key).sort();
    expect(await found('grace')).toEqual(['all', 'some']);
    expect(await found('BUDGET')).toEqual(['all', 'some']);
    expect(await found('hidden')).toEqual(['all']);
    expect(await found('nothing like it')).toEqual([]);
    // No words at all lists, as no query does.
    expect(await found('  ?! ')).toEqual(['all', 'none', 'some']);
  });

  it('indexes an item put without `index` by the fields its namespace declares (KEEL_STORE_INDEX)', async () => {
    const rules = parseStoreIndex('{"docs": ["title"], "docs.drafts": false, "": ["summary"]}');
    if (typeof rules === 'string') throw new Error(rules);
    const store = open([first], { indexes: rules });
    const value = { title: 'Quarterly plan', summary: 'money', body: 'hidden words' };
    await put(store, ['docs'], 'declared', value);
    await put(store, ['docs', 'team'], 'under-declared', value);
    await put(store, ['docs', 'drafts'], 'longest-prefix', value);
    await put(store, ['notes'], 'default-rule', value);
    await put(store, ['docs'], 'its-own', value, { index: ['body'] });
    const found = async (query: string) => (await search(store, { query })).map((item) => item.key).sort();
    // `docs` and what is under it: the title only; `docs.drafts`: nothing; the rest: `""`'s summary.
    expect(await found('quarterly')).toEqual(['declared', 'under-declared']);
    expect(await found('money')).toEqual(['default-rule']);
    // A put that names its own fields keeps them.
    expect(await found('hidden')).toEqual(['its-own']);
  });

  it('lists namespaces under a prefix, by suffix, cut to a depth, in order and paged', async () => {
    const store = open();
    for (const namespace of [['a', 'x', 'notes'], ['a', 'y'], ['a', 'x'], ['b', 'notes'], ['a_b']])
      await put(store, namespace, 'k', { n: 1 });
    const list = (input: Partial<Parameters<Store['listNamespaces']>[0]>) =>
      store.listNamespaces({
        owner,
        prefix: null,
        suffix: null,
        maxDepth: null,
        limit: 100,
        offset: 0,
        ...input,
      });
    expect(await list({})).toEqual([['a', 'x'], ['a', 'x', 'notes'], ['a', 'y'], ['a_b'], ['b', 'notes']]);
    expect(await list({ prefix: ['a'] })).toEqual([
      ['a', 'x'],
      ['a', 'x', 'notes'],
      ['a', 'y'],
    ]);
    expect(await list({ suffix: ['notes'] })).toEqual([
      ['a', 'x', 'notes'],
      ['b', 'notes'],
    ]);
    expect(await list({ maxDepth: 1 })).toEqual([['a'], ['a_b'], ['b']]);
    expect(await list({ prefix: ['a'], limit: 1, offset: 1 })).toEqual([['a', 'x', 'notes']]);
  });

  it('reads and finds items sealed before a key rotation, and refuses a value moved to another row', async () => {
    await put(open(), ['keys'], 'old', { text: 'sealed under the first key' });
    await put(open(), ['keys'], 'other', { text: 'another value' });
    const rotated = open([key('k2'), first]);
    expect((await get(rotated, ['keys'], 'old'))?.value).toEqual({ text: 'sealed under the first key' });
    expect((await search(rotated, { query: 'first' })).map((item) => item.key)).toEqual(['old']);
    await put(rotated, ['keys'], 'new', { text: 'sealed under the second key' });
    expect((await search(rotated, { query: 'second' })).map((item) => item.key)).toEqual(['new']);

    const withoutOld = open([key('k2')]);
    await expect(get(withoutOld, ['keys'], 'old')).rejects.toMatchObject({
      status: 500,
      code: 'store_item_undecryptable',
    });

    const raw = new Database(file);
    raw
      .prepare(
        "UPDATE store_items SET sealed = (SELECT sealed FROM store_items WHERE key = 'old'), key_id = 'k1' WHERE key = 'other'",
      )
      .run();
    raw.close();
    const moved = await get(open(), ['keys'], 'other').catch((error: unknown) => error);
    expect(moved).toBeInstanceOf(StoreError);
    expect(moved).toMatchObject({ code: 'store_item_undecryptable' });
  });

  it('keeps owners apart and counts nothing of another owner', async () => {
    const store = open();
    await put(store, ['shared'], 'k', { who: 'alice' });
    await store.put({
      owner: 'bob',
      namespace: ['shared'],
      key: 'k',
      value: { who: 'bob' },
      index: null,
      ttl: null,
    });
    expect((await get(store, ['shared'], 'k'))?.value).toEqual({ who: 'alice' });
    expect(
      (await store.get({ owner: 'bob', namespace: ['shared'], key: 'k', refreshTtl: false }))?.value,
    ).toEqual({
      who: 'bob',
    });
    await store.delete({ owner: 'bob', namespace: ['shared'], key: 'k' });
    expect((await get(store, ['shared'], 'k'))?.value).toEqual({ who: 'alice' });
    expect(
      await store.search({
        owner: 'carol',
        prefix: [],
        filter: null,
        query: 'alice',
        limit: 10,
        offset: 0,
        refreshTtl: false,
      }),
    ).toEqual([]);
  });
});

describe('KEEL_STORE_URL', () => {
  it('names SQLite under the data dir by default, a PostgreSQL URL, or a SQLite path, and refuses the rest', () => {
    expect(parseStoreUrl(undefined, '/data', '/work')).toEqual({ kind: 'sqlite', file: '/data/store.db' });
    expect(parseStoreUrl('postgresql://u:p@db:5432/keel_store', '/data', '/work')).toEqual({
      kind: 'postgres',
      url: 'postgresql://u:p@db:5432/keel_store',
    });
    expect(parseStoreUrl('sqlite:items.db', '/data', '/work')).toEqual({
      kind: 'sqlite',
      file: '/work/items.db',
    });
    expect(parseStoreUrl('mysql://db/keel', '/data', '/work')).toMatch(/KEEL_STORE_URL: give postgres:/);
  });
});

describe('KEEL_STORE_INDEX', () => {
  it('reads namespace prefixes to fields, longest first, and refuses what it cannot read', () => {
    expect(parseStoreIndex(undefined)).toEqual([]);
    expect(parseStoreIndex('{"": null, "a.b": false, "a": ["text", "tags[*]"]}')).toEqual([
      { prefix: ['a', 'b'], fields: false },
      { prefix: ['a'], fields: ['text', 'tags[*]'] },
      { prefix: [], fields: null },
    ]);
    expect(parseStoreIndex('["text"]')).toMatch(/KEEL_STORE_INDEX: give a JSON object/);
    expect(parseStoreIndex('{not json')).toMatch(/KEEL_STORE_INDEX: give a JSON object/);
    expect(parseStoreIndex('{"a..b": ["text"]}')).toMatch(/empty label/);
    expect(parseStoreIndex('{"a": "text"}')).toMatch(/"a" must name a list of field paths/);
    expect(parseStoreIndex('{"a": []}')).toMatch(/"a" must name a list of field paths/);
  });
});
