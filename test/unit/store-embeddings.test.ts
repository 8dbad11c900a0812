/**
 * Semantic search in the Store (decision 0451), against a local embeddings provider that speaks
 * Ollama's and OpenAI's protocols on loopback: a `query` ranks items by the cosine similarity of
 * their embeddings, `score` best first, finding what shares no word with it; embeddings are
 * sealed at rest; a provider that is down is a clear 503.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { EncryptionKey } from '../../codec/aes-gcm-codec';
import { parseConfig, type EmbeddingsConfig } from '../../platform/config';
import { createEmbedder } from '../../store/embeddings';
import { Store } from '../../store/store';
import { fakeEmbedding, startEmbeddingsFake, type EmbeddingsFake } from '../fakes/embeddings-server';

const keys: EncryptionKey[] = [{ id: 'k1', key: randomBytes(32) }];
const owner = 'alice';

describe('semantic search in the Store', () => {
  let fake: EmbeddingsFake;
  const stores: Store[] = [];
  beforeAll(async () => {
    fake = await startEmbeddingsFake();
  });
  afterEach(async () => {
    fake.failWith = undefined;
    for (const store of stores.splice(0)) await store.close();
  });
  afterAll(() => fake.close());

  const open = async (embeddings: EmbeddingsConfig | undefined) => {
    const directory = await mkdtemp(path.join(process.env.KEEL_TEST_DIR ?? os.tmpdir(), 'store-embed-'));
    const file = path.join(directory, 'store.db');
    const store = new Store({
      config: { kind: 'sqlite', file },
      keys: () => Promise.resolve(keys),
      ...(embeddings === undefined ? {} : { embedder: createEmbedder(embeddings) }),
    });
    stores.push(store);
    return { store, file };
  };
  const put = (
    store: Store,
    key: string,
    value: Record<string, unknown>,
    index: false | string[] | null = null,
  ) => store.put({ owner, namespace: ['memories'], key, value, index, ttl: null });
  const search = (store: Store, query: string, extra: Partial<Parameters<Store['search']>[0]> = {}) =>
    store.search({
      owner,
      prefix: ['memories'],
      filter: null,
      query,
      limit: 10,
      offset: 0,
      refreshTtl: false,
      ...extra,
    });

  const seed = async (store: Store) => {
    await put(store, 'espresso', { text: 'A double espresso, dark roast, every morning', kind: 'drink' });
    await put(store, 'matcha', { text: 'Matcha or chai in the afternoon', kind: 'drink' });
    await put(store, 'puppy', { text: 'Long walks with the puppy', kind: 'pet' });
    await put(store, 'umbrella', { text: 'Carries an umbrella whatever the forecast', kind: 'habit' });
    // Not indexed: stored, never embedded, never found by a query.
    await put(store, 'latte', { text: 'Latte art class on Fridays', kind: 'drink' }, false);
  };

  it.each([
    ['ollama', { provider: 'ollama', model: 'nomic-embed-text', apiKey: undefined }, '/api/embed'],
    ['openai', { provider: 'openai', model: 'text-embedding-3-small', apiKey: 'sk-test' }, '/v1/embeddings'],
  ] as const)('ranks by meaning over %s’s protocol, score best first', async (_name, provider, endpoint) => {
    const url = provider.provider === 'ollama' ? fake.url : `${fake.url}/v1`;
    const { store } = await open({ ...provider, url });
    const before = fake.requests.length;
    await seed(store);

    const coffee = await search(store, 'coffee please');
    // Only the espresso is about coffee; the rest are found too, far behind (a vector always ranks).
    expect(coffee.map((item) => item.key)[0]).toBe('espresso');
    expect(coffee.map((item) => item.key).sort()).toEqual(['espresso', 'matcha', 'puppy', 'umbrella']);
    const scores = coffee.map((item) => item.score!);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    expect(scores[0]).toBeGreaterThan(0.9);
    expect(scores[1]).toBeLessThan(0.2);
    expect((await search(store, 'my pet')).map((item) => item.key)[0]).toBe('puppy');
    // A filter and paging apply after the ranking.
    expect((await search(store, 'coffee', { filter: { kind: 'drink' } })).map((item) => item.key)).toEqual([
      'espresso',
      'matcha',
    ]);
    expect(
      (await search(store, 'coffee', { filter: { kind: 'drink' }, offset: 1, limit: 1 })).map(
        (item) => item.key,
      ),
    ).toEqual(['matcha']);
    // Without a query, a search lists as before: newest first, no score.
    expect((await search(store, '')).every((item) => item.score === null)).toBe(true);

    const sent = fake.requests.slice(before);
    expect(sent.every((request) => request.path === endpoint && request.model === provider.model)).toBe(true);
    expect(sent.some((request) => request.input.some((text) => text.includes('Latte')))).toBe(false);
    expect(
      sent.every((request) => request.authorization === (provider.apiKey && `Bearer ${provider.apiKey}`)),
    ).toBe(true);
  });

  it('finds by full text alone, word for word, without an embeddings provider', async () => {
    const { store } = await open(undefined);
    await seed(store);
    expect(await search(store, 'coffee')).toEqual([]);
    expect((await search(store, 'espresso')).map((item) => item.key)).toEqual(['espresso']);
  });

  it('keeps embeddings sealed: no vector of an item is in the database files', async () => {
    const { store, file } = await open({ provider: 'ollama', model: 'm', url: fake.url, apiKey: undefined });
    const text = 'Long walks with the puppy';
    // Keys are plaintext by design (decision 0435): this one says nothing of the text.
    await put(store, 'k1', { text });
    expect((await search(store, 'dog'))[0]?.key).toBe('k1');
    const plainVector = Buffer.from(Float32Array.from(fakeEmbedding(text)).buffer);
    for (const name of [file, `${file}-wal`]) {
      const bytes = await readFile(name).catch(() => Buffer.alloc(0));
      expect(bytes.includes(plainVector)).toBe(false);
      expect(bytes.includes(Buffer.from('puppy'))).toBe(false);
    }
  });

  it('answers 503 embeddings_unavailable when the provider fails, and writes nothing', async () => {
    const { store } = await open({ provider: 'ollama', model: 'm', url: fake.url, apiKey: undefined });
    fake.failWith = 500;
    await expect(put(store, 'k', { text: 'espresso' })).rejects.toMatchObject({
      status: 503,
      code: 'embeddings_unavailable',
    });
    fake.failWith = undefined;
    expect(await store.get({ owner, namespace: ['memories'], key: 'k', refreshTtl: false })).toBeNull();
  });

  it('reads KEEL_STORE_EMBED as an Ollama or OpenAI-compatible model at the provider’s address', () => {
    const ollama = parseConfig(
      { KEEL_STORE_EMBED: 'ollama:nomic-embed-text', OLLAMA_HOST: 'http://127.0.0.1:45011' },
      '/',
    );
    expect(ollama.embeddings).toEqual({
      provider: 'ollama',
      model: 'nomic-embed-text',
      url: 'http://127.0.0.1:45011',
      apiKey: undefined,
    });
    const openai = parseConfig(
      {
        KEEL_STORE_EMBED: 'openai:text-embedding-3-small',
        OPENAI_BASE_URL: 'http://127.0.0.1:45012/v1',
        OPENAI_API_KEY: 'sk',
      },
      '/',
    );
    expect(openai.embeddings).toMatchObject({
      provider: 'openai',
      url: 'http://127.0.0.1:45012/v1',
      apiKey: 'sk',
    });
    expect(parseConfig({}, '/').embeddings).toBeUndefined();
    expect(() => parseConfig({ KEEL_STORE_EMBED: 'cohere:embed' }, '/')).toThrow(/KEEL_STORE_EMBED/);
  });
});
