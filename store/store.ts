/**
 * LangGraph's Store, Keel's way: items by owner (as threads are: another owner's items are
 * neither seen nor in the way), values sealed with Keel's keys, search terms blinded, on the
 * database the configuration names. The database and the keys are opened at the first call, so
 * an API that never serves the store never opens either.
 */
import type { StoreConfig, StoreIndexRule } from '../platform/config';
import type { EncryptionKey } from '../codec/aes-gcm-codec';
import { PayloadDecryptionError } from '../codec/errors';
import { StoreError } from './errors';
import { type Candidate, type StoreDatabase, type StoredItem, underPrefix } from './database';
import { matchesFilter, unknownOperator } from './filter';
import { openPostgresStore } from './postgres';
import { StoreSealer } from './sealing';
import { openSqliteStore } from './sqlite';
import { indexedTexts, indexedWords, wordsOf, type IndexFields } from './terms';
import { cosine, type Embedder } from './embeddings';

/** The largest value stored, as JSON: a memory, not a file store. */
export const maxValueBytes = 256 * 1024;
/** How often expired items are deleted (reads never see them in between). */
const sweepEveryMs = 60_000;
/** Distinct words of a query looked up: a query is a question, not a document. */
const maxQueryWords = 64;
/** Candidates read per round when a filter leaves some out. */
const scanPage = 200;
/**
 * Items a semantic search compares at most, newest first: cosine similarity runs here, over
 * vectors opened one by one (decision 0451), which stays well under a second at this count.
 */
export const maxSemanticCandidates = 10_000;

/** An item as LangGraph's API answers it. */
export interface ApiItem {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export interface ApiSearchItem extends ApiItem {
  /**
   * With a `query`: the cosine similarity when an embedder is configured (decision 0451), else the
   * full-text rank; null when listing.
   */
  score: number | null;
}

export interface StoreOptions {
  config: StoreConfig;
  /** The keys values are sealed with (the first seals), loaded when the store first opens. */
  keys: () => Promise<readonly EncryptionKey[]>;
  /** Opens the database; the default picks the adapter `config` names. */
  open?: (config: StoreConfig) => Promise<StoreDatabase>;
  /** Current time in ms. @default Date.now */
  now?: () => number;
  /** With one, items are embedded as they are put and a `query` ranks by meaning (decision 0451). */
  embedder?: Embedder | undefined;
  /** What an item put without `index` is indexed by, longest prefix first (`KEEL_STORE_INDEX`). */
  indexes?: readonly StoreIndexRule[];
}

/** The fields the longest declared prefix holding `namespace` names; the whole value (null) when none does. */
export function declaredIndex(rules: readonly StoreIndexRule[], namespace: readonly string[]): IndexFields {
  const rule = rules.find((candidate) => candidate.prefix.every((label, at) => namespace[at] === label));
  return rule === undefined ? null : rule.fields;
}

/** The adapter `config` names. */
export async function openStoreDatabase(config: StoreConfig): Promise<StoreDatabase> {
  if (config.kind === 'postgres') return openPostgresStore(config.url);
  return openSqliteStore(config.file);
}

/**
 * A name as the databases keep it: a lone surrogate (JSON may carry one) becomes U+FFFD, as
 * either database would store it, so the sealed value's bound address is the stored one.
 */
const wellFormed = (name: string): string =>
  name.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');

const join = (namespace: readonly string[]): string => namespace.map(wellFormed).join('.');
const split = (namespace: string): string[] => (namespace === '' ? [] : namespace.split('.'));

/** Namespaces in order label by label, a shorter one before those under it (as tuples sort). */
function byLabels(left: readonly string[], right: readonly string[]): number {
  for (let index = 0; index < Math.min(left.length, right.length); index++) {
    const [a, b] = [left[index]!, right[index]!];
    if (a !== b) return a < b ? -1 : 1;
  }
  return left.length - right.length;
}

export class Store {
  readonly #options: StoreOptions;
  readonly #now: () => number;
  #opened: Promise<{ db: StoreDatabase; sealer: StoreSealer }> | undefined;
  #sweeper: NodeJS.Timeout | undefined;

  constructor(options: StoreOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  async #open(): Promise<{ db: StoreDatabase; sealer: StoreSealer }> {
    this.#opened ??= (async () => {
      const sealer = new StoreSealer(await this.#options.keys());
      const db = await (this.#options.open ?? openStoreDatabase)(this.#options.config);
      await db.sweep(this.#now());
      this.#sweeper = setInterval(() => void db.sweep(this.#now()).catch(() => undefined), sweepEveryMs);
      this.#sweeper.unref();
      return { db, sealer };
    })().catch((error: unknown) => {
      // The next call tries again: a database that was down may be back.
      this.#opened = undefined;
      throw new StoreError(
        503,
        'store_unavailable',
        `the store's database could not be opened: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
    return this.#opened;
  }

  #toApi(item: StoredItem, sealer: StoreSealer): ApiItem {
    let value: unknown;
    try {
      value = sealer.open(item.keyId, item.sealed, item);
    } catch (error) {
      if (error instanceof PayloadDecryptionError)
        throw new StoreError(500, 'store_item_undecryptable', error.message);
      throw error;
    }
    return {
      namespace: split(item.namespace),
      key: item.key,
      value: value as Record<string, unknown>,
      created_at: new Date(item.createdAt).toISOString(),
      updated_at: new Date(item.updatedAt).toISOString(),
    };
  }

  async put(input: {
    owner: string;
    namespace: readonly string[];
    key: string;
    value: Record<string, unknown>;
    index: IndexFields;
    ttl: number | null;
  }): Promise<void> {
    const bytes = Buffer.byteLength(JSON.stringify(input.value), 'utf8');
    if (bytes > maxValueBytes)
      throw new StoreError(
        422,
        'value_too_large',
        `value is ${bytes} bytes of JSON; the store keeps values of at most ${maxValueBytes}`,
        'value',
      );
    const { db, sealer } = await this.#open();
    const now = this.#now();
    const address = { owner: input.owner, namespace: join(input.namespace), key: wellFormed(input.key) };
    const existing = await db.get(address.owner, address.namespace, address.key, now);
    const sealed = sealer.seal(input.value, address);
    // A put that names no fields is indexed as its namespace declares (null: the whole value).
    const index =
      input.index === null ? declaredIndex(this.#options.indexes ?? [], input.namespace) : input.index;
    const text = indexedTexts(input.value, index).join('\n');
    const embedder = this.#options.embedder;
    const [vector] = embedder === undefined || text.trim() === '' ? [] : await embedder.embed([text]);
    await db.put({
      ...address,
      ...sealed,
      embedding: vector === undefined ? null : sealer.sealVector(vector, sealed.keyId, address),
      terms: sealer.blindForIndex(indexedWords(input.value, index)).join(' '),
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
      expiresAt: input.ttl === null ? null : now + Math.round(input.ttl * 60_000),
      ttlMinutes: input.ttl,
    });
  }

  async get(input: {
    owner: string;
    namespace: readonly string[];
    key: string;
    refreshTtl: boolean;
  }): Promise<ApiItem | null> {
    const { db, sealer } = await this.#open();
    const now = this.#now();
    const found = await db.get(input.owner, join(input.namespace), wellFormed(input.key), now);
    if (found === undefined) return null;
    if (input.refreshTtl && found.ttlMinutes !== null) await db.refresh(input.owner, [found], now);
    return this.#toApi(found, sealer);
  }

  async delete(input: { owner: string; namespace: readonly string[]; key: string }): Promise<void> {
    const { db } = await this.#open();
    await db.delete(input.owner, join(input.namespace), wellFormed(input.key));
  }

  async search(input: {
    owner: string;
    prefix: readonly string[];
    filter: Record<string, unknown> | null;
    query: string | null;
    limit: number;
    offset: number;
    refreshTtl: boolean;
  }): Promise<ApiSearchItem[]> {
    const operator = unknownOperator(input.filter);
    if (operator !== undefined)
      throw new StoreError(
        422,
        'invalid_filter',
        `filter: unknown operator ${operator}; use $eq, $ne, $gt, $gte, $lt or $lte`,
        'filter',
      );
    const { db, sealer } = await this.#open();
    const now = this.#now();
    const embedder = this.#options.embedder;
    if (embedder !== undefined && input.query !== null && input.query.trim() !== '')
      return this.#searchByMeaning({ ...input, query: input.query, embedder, db, sealer, now });
    const words = input.query === null ? [] : [...new Set(wordsOf(input.query))].slice(0, maxQueryWords);
    // A query of no words (only spaces or punctuation) ranks nothing: it lists, as no query does.
    const terms = words.length === 0 ? undefined : sealer.blindForQuery(words);
    const base = {
      owner: input.owner,
      prefix: join(input.prefix),
      now,
      ...(terms === undefined ? {} : { terms }),
    };
    const found: Array<{ item: ApiItem; candidate: Candidate }> = [];
    const filter = input.filter;
    if (filter === null || Object.keys(filter).length === 0) {
      for (const candidate of await db.candidates({ ...base, limit: input.limit, offset: input.offset }))
        found.push({ item: this.#toApi(candidate, sealer), candidate });
    } else {
      // Values are sealed: the database pages candidates, the filter runs on opened values.
      let skipped = 0;
      for (let offset = 0; found.length < input.limit; offset += scanPage) {
        const page = await db.candidates({ ...base, limit: scanPage, offset });
        for (const candidate of page) {
          const item = this.#toApi(candidate, sealer);
          if (!matchesFilter(item.value, filter)) continue;
          if (skipped < input.offset) skipped++;
          else if (found.length < input.limit) found.push({ item, candidate });
        }
        if (page.length < scanPage) break;
      }
    }
    if (input.refreshTtl) await refreshTtlOf(db, input.owner, found, now);
    return found.map(({ item, candidate }) => ({ ...item, score: candidate.rank }));
  }

  /**
   * A search ranked by meaning: the query's embedding against each embedded item's under the
   * prefix (the newest `maxSemanticCandidates`), `score` the cosine similarity, best first.
   */
  async #searchByMeaning(input: {
    owner: string;
    prefix: readonly string[];
    filter: Record<string, unknown> | null;
    query: string;
    limit: number;
    offset: number;
    refreshTtl: boolean;
    embedder: Embedder;
    db: StoreDatabase;
    sealer: StoreSealer;
    now: number;
  }): Promise<ApiSearchItem[]> {
    const { db, sealer, now, filter } = input;
    const [queryVector] = await input.embedder.embed([input.query]);
    const target = Float32Array.from(queryVector!);
    const scored: Array<{ candidate: Candidate; score: number }> = [];
    for (let offset = 0; offset < maxSemanticCandidates; offset += scanPage) {
      const page = await db.candidates({
        owner: input.owner,
        prefix: join(input.prefix),
        embedded: true,
        now,
        limit: scanPage,
        offset,
      });
      for (const candidate of page) {
        const vector = sealer.openVector(candidate.keyId, candidate.embedding!, candidate);
        if (vector !== undefined) scored.push({ candidate, score: cosine(target, vector) });
      }
      if (page.length < scanPage) break;
    }
    scored.sort((left, right) => right.score - left.score);
    const found: Array<{ item: ApiItem; candidate: Candidate; score: number }> = [];
    let skipped = 0;
    for (const { candidate, score } of scored) {
      if (found.length >= input.limit) break;
      const item = this.#toApi(candidate, sealer);
      if (filter !== null && Object.keys(filter).length > 0 && !matchesFilter(item.value, filter)) continue;
      if (skipped < input.offset) skipped++;
      else found.push({ item, candidate, score });
    }
    if (input.refreshTtl) await refreshTtlOf(db, input.owner, found, now);
    return found.map(({ item, score }) => ({ ...item, score }));
  }

  async listNamespaces(input: {
    owner: string;
    prefix: readonly string[] | null;
    suffix: readonly string[] | null;
    maxDepth: number | null;
    limit: number;
    offset: number;
  }): Promise<string[][]> {
    const { db } = await this.#open();
    const prefix = join(input.prefix ?? []);
    const suffix = input.suffix ?? [];
    const seen = new Set<string>();
    for (const namespace of await db.namespaces(input.owner, prefix, this.#now())) {
      if (!underPrefix(namespace, prefix)) continue;
      const labels = split(namespace);
      if (suffix.length > 0 && join(labels.slice(-suffix.length)) !== join(suffix)) continue;
      if (labels.length < suffix.length) continue;
      seen.add(join(input.maxDepth === null ? labels : labels.slice(0, input.maxDepth)));
    }
    return [...seen]
      .map(split)
      .sort(byLabels)
      .slice(input.offset, input.offset + input.limit);
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    const opened = this.#opened;
    this.#opened = undefined;
    if (opened !== undefined) await (await opened.catch(() => undefined))?.db.close();
  }
}

/** `refresh_ttl`: the items a read found, that have a TTL, start it again from `now`. */
async function refreshTtlOf(
  db: StoreDatabase,
  owner: string,
  found: ReadonlyArray<{ candidate: Candidate }>,
  now: number,
): Promise<void> {
  const touched = found
    .filter(({ candidate }) => candidate.ttlMinutes !== null)
    .map(({ candidate }) => candidate);
  if (touched.length > 0) await db.refresh(owner, touched, now);
}
