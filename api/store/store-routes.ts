/**
 * LangGraph's Store API: items by namespace and key, across threads (decision 0435). Paths,
 * bodies and answers as LangGraph's server gives them, so `client.store.*` of its SDKs works
 * unmodified: a put or delete answers 204, a get of no item answers `null`, a namespace is sent
 * to a get as its labels joined by `.`. Items are the caller's owner's only.
 */
import { Router } from 'express';
import { z } from 'zod';
import { operation, route } from '../contract';
import type { Store } from '../../store/store';
import { ownerOf } from '../validate';

/**
 * Labels per namespace, characters per label and per key: names, not documents. A get sends
 * both in its URL, which Node reads within 16 KiB of headers: at most 9 bytes a character
 * percent-encoded, 1,009 + 256 characters stay well inside.
 */
export const storeLimits = { maxLabels: 10, maxLabelChars: 100, maxKeyChars: 256 } as const;

const label = z
  .string()
  .min(1, { error: 'namespace labels cannot be empty' })
  .max(storeLimits.maxLabelChars)
  // eslint-disable-next-line no-control-regex -- NUL refused: SQLite cuts text at it, PostgreSQL refuses it
  .regex(/^[^.\x00]+$/, { error: "namespace labels cannot contain '.' (nor NUL)" });

const namespace = z
  .array(label)
  .min(1, { error: 'the namespace needs at least one label' })
  .max(storeLimits.maxLabels)
  .describe('The namespace path, its labels outermost first');

const optionalPath = z.array(label).max(storeLimits.maxLabels).nullable().optional();

const key = z
  .string()
  .min(1, { error: 'the key cannot be empty' })
  .max(storeLimits.maxKeyChars)
  // eslint-disable-next-line no-control-regex -- NUL refused: SQLite cuts text at it, PostgreSQL refuses it
  .regex(/^[^\x00]+$/, { error: 'the key cannot contain NUL' })
  .describe("The item's key within its namespace");

const value = z.record(z.string(), z.unknown()).describe("The item's value, a JSON object");

const timestamp = z.string().describe('ISO 8601');

const item = z.object({
  namespace: z.array(z.string()),
  key: z.string(),
  value: z.record(z.string(), z.unknown()),
  created_at: timestamp,
  updated_at: timestamp,
});

const searchItem = item.extend({
  score: z
    .number()
    .nullable()
    .describe(
      'With a query: the cosine similarity when an embeddings provider is configured, else the full-text rank (larger is better)',
    ),
});

/** Ten years, in minutes: a TTL past it is a typo for "none". */
const maxTtlMinutes = 5_256_000;

export const putItem = operation({
  method: 'put',
  path: '/store/items',
  summary:
    "Store or replace an item. `index`: null indexes the fields the operator declared for its namespace (KEEL_STORE_INDEX), else the whole value, for text search and embeddings; false none; a list the fields it names (`title`, `author.name`, `tags[*]`); `ttl`: minutes until it expires (null: never); a value's JSON is at most 256 KiB (422 value_too_large)",
  body: z.object({
    namespace,
    key,
    value,
    index: z
      .union([z.literal(false), z.array(z.string().min(1).max(200)).max(50), z.null()])
      .optional()
      .describe(
        'Which fields text search and embeddings read: null (as the namespace declares, else all), false (none), or field paths',
      ),
    ttl: z
      .number()
      .positive()
      .max(maxTtlMinutes)
      .nullable()
      .optional()
      .describe('Minutes until the item expires'),
  }),
  responses: { 204: { description: 'Stored' } },
  errors: [503],
  tags: ['store'],
});

export const getItem = operation({
  method: 'get',
  path: '/store/items',
  summary:
    'One item, or null when there is none (or it expired). `refresh_ttl` (default true) restarts its TTL',
  query: z.object({
    namespace: z
      .string()
      .max(storeLimits.maxLabels * (storeLimits.maxLabelChars + 1))
      // eslint-disable-next-line no-control-regex -- NUL refused: SQLite cuts text at it, PostgreSQL refuses it
      .regex(/^[^.\x00]+(\.[^.\x00]+)*$/, {
        error: "the namespace's labels joined by '.', none of them empty",
      })
      .describe("The namespace's labels joined by '.' (as LangGraph's SDKs send it)"),
    key,
    refresh_ttl: z.enum(['true', 'false']).optional(),
  }),
  responses: { 200: { description: 'The item, or null', schema: item.nullable() } },
  errors: [503],
  tags: ['store'],
});

export const deleteItem = operation({
  method: 'delete',
  path: '/store/items',
  summary: 'Delete an item (204 whether or not it was there)',
  body: z.object({ namespace, key }),
  responses: { 204: { description: 'Deleted' } },
  errors: [503],
  tags: ['store'],
});

export const searchItems = operation({
  method: 'post',
  path: '/store/items/search',
  summary:
    "Items under a namespace prefix: the most recently updated first, or with `query` those whose indexed words match, best first (`score`). `filter` compares value fields (a value, or $eq, $ne, $gt, $gte, $lt, $lte; 422 invalid_filter for another operator). `refresh_ttl` (default true) restarts the found items' TTL",
  body: z.object({
    namespace_prefix: optionalPath,
    filter: z.record(z.string(), z.unknown()).nullable().optional(),
    limit: z.int().min(1).max(1000).default(10),
    offset: z.int().min(0).max(1_000_000).default(0),
    query: z.string().max(10_000).nullable().optional(),
    refresh_ttl: z.boolean().nullable().optional(),
  }),
  responses: { 200: { description: 'The items', schema: z.object({ items: z.array(searchItem) }) } },
  errors: [503],
  tags: ['store'],
});

export const listNamespaces = operation({
  method: 'post',
  path: '/store/namespaces',
  summary:
    'The namespaces that hold items: under `prefix`, ending in `suffix`, cut to `max_depth` labels (each once), in order',
  body: z.object({
    prefix: optionalPath,
    suffix: optionalPath,
    max_depth: z.int().min(1).max(storeLimits.maxLabels).nullable().optional(),
    limit: z.int().min(1).max(1000).default(100),
    offset: z.int().min(0).max(1_000_000).default(0),
  }),
  responses: {
    200: {
      description: 'The namespaces',
      schema: z.object({ namespaces: z.array(z.array(z.string())) }),
    },
  },
  errors: [503],
  tags: ['store'],
});

export const storeOperations = [putItem, getItem, deleteItem, searchItems, listNamespaces];

export function storeRoutes(store: Store): Router {
  const router = Router();
  /** Items are scoped as threads are: by the token's owner, `''` on a loopback API without tokens. */
  const owner = (response: Parameters<typeof ownerOf>[0]): string => ownerOf(response) ?? '';

  route(router, putItem, async (_request, response, { body }) => {
    await store.put({
      owner: owner(response),
      namespace: body.namespace,
      key: body.key,
      value: body.value,
      index: body.index ?? null,
      ttl: body.ttl ?? null,
    });
    response.status(204).end();
  });

  route(router, getItem, async (_request, response, { query }) => {
    response.json(
      await store.get({
        owner: owner(response),
        namespace: query.namespace.split('.'),
        key: query.key,
        refreshTtl: query.refresh_ttl !== 'false',
      }),
    );
  });

  route(router, deleteItem, async (_request, response, { body }) => {
    await store.delete({ owner: owner(response), namespace: body.namespace, key: body.key });
    response.status(204).end();
  });

  route(router, searchItems, async (_request, response, { body }) => {
    const items = await store.search({
      owner: owner(response),
      prefix: body.namespace_prefix ?? [],
      filter: body.filter ?? null,
      query: body.query ?? null,
      limit: body.limit,
      offset: body.offset,
      refreshTtl: body.refresh_ttl !== false,
    });
    response.json({ items });
  });

  route(router, listNamespaces, async (_request, response, { body }) => {
    const namespaces = await store.listNamespaces({
      owner: owner(response),
      prefix: body.prefix ?? null,
      suffix: body.suffix ?? null,
      maxDepth: body.max_depth ?? null,
      limit: body.limit,
      offset: body.offset,
    });
    response.json({ namespaces });
  });

  return router;
}
