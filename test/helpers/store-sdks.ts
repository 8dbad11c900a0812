/**
 * LangGraph's store calls, through its own SDKs unmodified, as one scenario each: the Store API's
 * tests run them against SQLite (test/api/store.test.ts) and PostgreSQL
 * (test/api/store-postgres.test.ts), so both databases answer the same calls the same way.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import type { Client } from '@langchain/langgraph-sdk';
import { ensurePythonSdk } from './python-sdk';

/**
 * Puts (with `index`), gets, searches by filter, by words and by page, lists namespaces by
 * prefix, suffix and depth, replaces and deletes, through the JS SDK, as LangGraph answers.
 */
export async function storeCallsOfTheJsSdk(alice: Client): Promise<void> {
  const user = ['memories', `user-${randomUUID()}`];
  await alice.store.putItem(user, 'food', {
    text: 'likes spicy ramen, spicy curry and spicy wings',
    rating: 5,
  });
  await alice.store.putItem(user, 'drink', { text: 'prefers green tea', rating: 3 }, { index: ['text'] });
  await alice.store.putItem([...user, 'work'], 'editor', { text: 'uses vim', rating: 4 }, { index: false });

  const food = await alice.store.getItem(user, 'food');
  expect(food).toMatchObject({
    namespace: user,
    key: 'food',
    value: { text: 'likes spicy ramen, spicy curry and spicy wings', rating: 5 },
  });
  expect(Date.parse(food!.createdAt)).not.toBeNaN();
  expect(await alice.store.getItem(user, 'no-such-key')).toBeNull();

  // Listing: most recently updated first, paged, filtered on value fields.
  const listed = await alice.store.searchItems(user, { limit: 2 });
  expect(listed.items.map((item) => item.key)).toEqual(['editor', 'drink']);
  expect(listed.items[0]).toMatchObject({ namespace: [...user, 'work'], score: null });
  expect(
    (await alice.store.searchItems(user, { limit: 2, offset: 2 })).items.map((item) => item.key),
  ).toEqual(['food']);
  const rated = await alice.store.searchItems(user, { filter: { rating: { $gte: 4 } } });
  expect(rated.items.map((item) => item.key).sort()).toEqual(['editor', 'food']);
  expect(
    (await alice.store.searchItems(user, { filter: { rating: 3 } })).items.map((item) => item.key),
  ).toEqual(['drink']);

  // Words: ranked by the full-text index; an item put with `index: false` is never found by them.
  const spicy = await alice.store.searchItems(user, { query: 'Spicy tea' });
  expect(spicy.items.map((item) => item.key)).toEqual(['food', 'drink']);
  expect(spicy.items[0]!.score).toBeGreaterThan(spicy.items[1]!.score!);
  expect((await alice.store.searchItems(user, { query: 'vim' })).items).toEqual([]);

  expect(await alice.store.listNamespaces({ prefix: user })).toEqual({
    namespaces: [user, [...user, 'work']],
  });
  expect(await alice.store.listNamespaces({ prefix: user, suffix: ['work'] })).toEqual({
    namespaces: [[...user, 'work']],
  });
  expect(await alice.store.listNamespaces({ prefix: user, maxDepth: 2 })).toEqual({ namespaces: [user] });

  await alice.store.putItem(user, 'food', { text: 'now vegetarian' });
  const replaced = await alice.store.getItem(user, 'food');
  expect(replaced!.value).toEqual({ text: 'now vegetarian' });
  expect(replaced!.createdAt).toBe(food!.createdAt);
  await alice.store.deleteItem(user, 'food');
  expect(await alice.store.getItem(user, 'food')).toBeNull();
  // A second delete is no error, as in LangGraph.
  await alice.store.deleteItem(user, 'food');
}

/** Another owner's items are neither read, found, listed, replaced nor deleted. */
export async function ownersApartThroughTheJsSdk(alice: Client, bob: Client): Promise<void> {
  const shared = ['profile', `same-${randomUUID()}`];
  await alice.store.putItem(shared, 'name', { name: 'Alice' });
  expect(await bob.store.getItem(shared, 'name')).toBeNull();
  expect((await bob.store.searchItems(shared, { query: 'Alice' })).items).toEqual([]);
  expect((await bob.store.searchItems(shared)).items).toEqual([]);
  expect((await bob.store.listNamespaces({ prefix: shared })).namespaces).toEqual([]);

  await bob.store.putItem(shared, 'name', { name: 'Bob' });
  await bob.store.deleteItem(shared, 'name');
  expect((await alice.store.getItem(shared, 'name'))!.value).toEqual({ name: 'Alice' });
  expect((await alice.store.searchItems(shared, { query: 'alice' })).items).toHaveLength(1);
}

const pythonScenario = `
import json, sys
from langgraph_sdk import get_sync_client
client = get_sync_client(url=sys.argv[1], api_key=sys.argv[2])
ns = json.loads(sys.argv[3])
client.store.put_item(ns, "lang", {"text": "writes python daily", "years": 9}, index=["text"], ttl=60)
client.store.put_item(ns + ["old"], "lang", {"text": "wrote perl once", "years": 1}, index=False)
got = client.store.get_item(ns, "lang", refresh_ttl=True)
found = client.store.search_items(ns, query="python", limit=5)
filtered = client.store.search_items(ns, filter={"years": {"$lt": 5}})
first = client.store.search_items(ns, limit=1)
second = client.store.search_items(ns, limit=1, offset=1)
listed = client.store.list_namespaces(prefix=ns, max_depth=len(ns) + 1)
by_suffix = client.store.list_namespaces(prefix=ns, suffix=["old"])
client.store.delete_item(ns, "lang")
print(json.dumps({
  "got": got["value"], "found": [[i["key"], i["score"] > 0] for i in found["items"]],
  "filtered": [i["namespace"] for i in filtered["items"]],
  "pages": [i["namespace"] for i in first["items"] + second["items"]],
  "namespaces": listed["namespaces"], "by_suffix": by_suffix["namespaces"],
  "after": client.store.get_item(ns, "lang"),
}))
`;

/**
 * The same calls from LangGraph's Python SDK: put with `index` and `ttl`, get with
 * `refresh_ttl`, search by words, filter and page, namespaces by prefix, depth and suffix, delete.
 */
export async function storeCallsOfThePythonSdk(url: string, token: string): Promise<void> {
  const python = await ensurePythonSdk();
  const namespace = ['python', randomUUID()];
  const { stdout } = await promisify(execFile)(
    python,
    ['-c', pythonScenario, url, token, JSON.stringify(namespace)],
    { timeout: 60_000 },
  );
  expect(JSON.parse(stdout)).toEqual({
    got: { text: 'writes python daily', years: 9 },
    found: [['lang', true]],
    filtered: [[...namespace, 'old']],
    pages: [[...namespace, 'old'], namespace],
    namespaces: [namespace, [...namespace, 'old']],
    by_suffix: [[...namespace, 'old']],
    after: null,
  });
}
