/**
 * What the Store API asks of a database: one small adapter per engine (SQLite in
 * `store/sqlite.ts`, PostgreSQL in `store/postgres.ts`), the same calls and the same
 * rows. Values arrive sealed (store/sealing.ts) and their search terms blinded, so no
 * adapter ever holds a value in plaintext. Times are milliseconds since the epoch.
 */

/** An item as the database keeps it. */
export interface StoredItem {
  /**
   * The owner (`''` without API tokens), so one owner never reads another's items, as threads are
   * scoped (decision 0085).
   */
  owner: string;
  /** The labels joined by `.`, which no label holds. */
  namespace: string;
  key: string;
  /** The id of the key that sealed `sealed`. */
  keyId: string;
  /** Nonce, ciphertext and tag of the value's JSON. */
  sealed: Uint8Array;
  createdAt: number;
  updatedAt: number;
  /** When the item expires, or null for never. */
  expiresAt: number | null;
  /** The TTL the item was written with, in minutes, to refresh `expiresAt` on reads. */
  ttlMinutes: number | null;
  /**
   * Its embedding, sealed as its value is, since an embedding can be inverted to much of the text it
   * came from (decision 0451); null when it has none.
   */
  embedding: Uint8Array | null;
}

/** A stored item and what it is written with: its blinded search terms, space-separated. */
/**
 * An item's row as either database answers it: PostgreSQL gives its BIGINTs as strings and its
 * BYTEA as a Buffer, SQLite numbers and a Uint8Array.
 */
export interface ItemRow {
  owner: string;
  namespace: string;
  key: string;
  key_id: string;
  sealed: Uint8Array;
  created_at: number | string;
  updated_at: number | string;
  expires_at: number | string | null;
  ttl_minutes: number | null;
  embedding?: Uint8Array | null;
  rank?: number | null;
}

export const itemOfRow = (row: ItemRow): StoredItem => ({
  owner: row.owner,
  namespace: row.namespace,
  key: row.key,
  keyId: row.key_id,
  sealed: new Uint8Array(row.sealed),
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
  expiresAt: row.expires_at === null ? null : Number(row.expires_at),
  ttlMinutes: row.ttl_minutes,
  embedding: row.embedding === undefined || row.embedding === null ? null : new Uint8Array(row.embedding),
});

export interface ItemWrite extends StoredItem {
  /** Blinded terms for the full-text index; empty when the item is not indexed. */
  terms: string;
}

/** A search's page of candidates; `rank` (larger is better) when terms were matched. */
export interface Candidate extends StoredItem {
  rank: number | null;
}

export interface CandidateQuery {
  owner: string;
  /** The joined prefix (`''` for every namespace). */
  prefix: string;
  /** Blinded terms, any of which matches; ranked by the database's full-text index. */
  terms?: readonly string[];
  /** Only items with an embedding, listed (for a semantic search, which ranks them itself). */
  embedded?: true;
  now: number;
  limit: number;
  offset: number;
}

export interface StoreDatabase {
  /** Which engine, for logs and errors. */
  readonly engine: 'sqlite' | 'postgres';
  /** Inserts or replaces the item, whole. */
  put(item: ItemWrite): Promise<void>;
  /** The live item, if there is one. */
  get(owner: string, namespace: string, key: string, now: number): Promise<StoredItem | undefined>;
  /** Moves the expiry of these items (those written with a TTL) to `now` plus their TTL. */
  refresh(owner: string, items: readonly { namespace: string; key: string }[], now: number): Promise<void>;
  delete(owner: string, namespace: string, key: string): Promise<void>;
  /**
   * Live items under `prefix`: by rank when `terms` are given (only items that match one),
   * else the most recently updated first.
   */
  candidates(query: CandidateQuery): Promise<Candidate[]>;
  /** Every joined namespace with a live item under `prefix`. */
  namespaces(owner: string, prefix: string, now: number): Promise<string[]>;
  /** Deletes expired items; returns how many. */
  sweep(now: number): Promise<number>;
  close(): Promise<void>;
}

/** `namespace` is `prefix` or lies under it (labels hold no `.`, so the joined forms compare). */
export const underPrefix = (namespace: string, prefix: string): boolean =>
  prefix === '' || namespace === prefix || namespace.startsWith(`${prefix}.`);
