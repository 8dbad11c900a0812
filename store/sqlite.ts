/**
 * The Store API on SQLite, the embedded default: one file under the data directory, opened with
 * `libsql` (SQLite's engine with FTS5, its native build shipped as an npm package; decision
 * 0435), in WAL mode. Search terms go in an FTS5 table beside the items, ranked by its bm25.
 * libsql's calls are synchronous and short (one item, or one page); the API awaits them as the
 * PostgreSQL adapter's.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'libsql';
import {
  itemOfRow,
  type Candidate,
  type CandidateQuery,
  type ItemRow,
  type ItemWrite,
  type StoreDatabase,
} from './database';

/** Each migration once, in order, recorded in `store_migrations`; never edit one that shipped. */
const migrations: readonly string[] = [
  `CREATE TABLE store_items (
     owner TEXT NOT NULL,
     namespace TEXT NOT NULL,
     key TEXT NOT NULL,
     key_id TEXT NOT NULL,
     sealed BLOB NOT NULL,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     expires_at INTEGER,
     ttl_minutes REAL,
     PRIMARY KEY (owner, namespace, key)
   );
   CREATE INDEX store_items_updated ON store_items (owner, updated_at DESC);
   CREATE INDEX store_items_expiry ON store_items (expires_at) WHERE expires_at IS NOT NULL;
   CREATE VIRTUAL TABLE store_terms USING fts5 (terms, tokenize = 'unicode61');`,
  // Decision 0451: an item's embedding, sealed (nonce, float32s, tag).
  `ALTER TABLE store_items ADD COLUMN embedding BLOB;`,
];

interface Row extends ItemRow {
  rowid: number;
}

/** The SQL that keeps a query to live items under a prefix (`?` ×4: now, prefix, its range). */
const livePrefix = `(i.expires_at IS NULL OR i.expires_at > ?)
  AND (? = '' OR i.namespace = ? OR (i.namespace >= ? AND i.namespace < ?))`;

/**
 * The range of namespaces under `prefix`: `prefix.` up to `prefix/` (the next byte after `.`),
 * as SQLite compares text by its bytes; the primary key's index serves it.
 */
const prefixParameters = (now: number, prefix: string) => [now, prefix, prefix, `${prefix}.`, `${prefix}/`];

/** `work`'s result as a promise: a throw rejects it, as the PostgreSQL adapter's calls do. */
const settle = <T>(work: () => T): Promise<T> => new Promise((resolve) => resolve(work()));

/** An FTS5 query for any of `terms` (blinded terms are hex: nothing in them needs quoting). */
const anyOf = (terms: readonly string[]): string => terms.map((term) => `"${term}"`).join(' OR ');

export function openSqliteStore(file: string): StoreDatabase {
  mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.exec(
    'CREATE TABLE IF NOT EXISTS store_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)',
  );
  // Read and applied in one write transaction: two processes opening the file migrate once.
  db.transaction(() => {
    const { version } = db.prepare('SELECT max(version) AS version FROM store_migrations').get() as {
      version: number | null;
    };
    migrations.forEach((sql, index) => {
      if (index + 1 <= (version ?? 0)) return;
      db.exec(sql);
      db.prepare('INSERT INTO store_migrations (version, applied_at) VALUES (?, ?)').run(
        index + 1,
        Date.now(),
      );
    });
  }).immediate();

  const upsert = db.prepare(
    `INSERT INTO store_items (owner, namespace, key, key_id, sealed, created_at, updated_at, expires_at, ttl_minutes, embedding)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (owner, namespace, key) DO UPDATE SET key_id = excluded.key_id, sealed = excluded.sealed, created_at = excluded.created_at,
       updated_at = excluded.updated_at, expires_at = excluded.expires_at, ttl_minutes = excluded.ttl_minutes,
       embedding = excluded.embedding
     RETURNING rowid`,
  );
  const dropTerms = db.prepare('DELETE FROM store_terms WHERE rowid = ?');
  const addTerms = db.prepare('INSERT INTO store_terms (rowid, terms) VALUES (?, ?)');
  const find = db.prepare(
    `SELECT rowid, * FROM store_items i WHERE owner = ? AND namespace = ? AND key = ?
       AND (expires_at IS NULL OR expires_at > ?)`,
  );
  const findRow = db.prepare('SELECT rowid FROM store_items WHERE owner = ? AND namespace = ? AND key = ?');
  const remove = db.prepare('DELETE FROM store_items WHERE rowid = ?');
  const refresh = db.prepare(
    `UPDATE store_items SET expires_at = ? + CAST(ttl_minutes * 60000 AS INTEGER)
     WHERE owner = ? AND namespace = ? AND key = ? AND ttl_minutes IS NOT NULL`,
  );
  const listed = db.prepare(
    `SELECT i.rowid, i.*, NULL AS rank FROM store_items i WHERE i.owner = ? AND ${livePrefix}
     ORDER BY i.updated_at DESC, i.rowid DESC LIMIT ? OFFSET ?`,
  );
  const listedEmbedded = db.prepare(
    `SELECT i.rowid, i.*, NULL AS rank FROM store_items i WHERE i.owner = ? AND i.embedding IS NOT NULL AND ${livePrefix}
     ORDER BY i.updated_at DESC, i.rowid DESC LIMIT ? OFFSET ?`,
  );
  const matched = db.prepare(
    `SELECT i.rowid, i.*, -bm25(store_terms) AS rank FROM store_terms
       JOIN store_items i ON i.rowid = store_terms.rowid
     WHERE store_terms MATCH ? AND i.owner = ? AND ${livePrefix}
     ORDER BY bm25(store_terms), i.rowid DESC LIMIT ? OFFSET ?`,
  );
  const namespaces = db.prepare(
    `SELECT DISTINCT i.namespace FROM store_items i WHERE i.owner = ? AND ${livePrefix} ORDER BY i.namespace`,
  );
  const expired = db.prepare('SELECT rowid FROM store_items WHERE expires_at <= ?');

  // libsql's transactions do not nest: a transaction calls this, never `deleteRow`.
  const removeRow = (rowid: number) => {
    dropTerms.run(rowid);
    remove.run(rowid);
  };
  const deleteRow = db.transaction(removeRow);
  const write = db.transaction((item: ItemWrite) => {
    const { rowid } = upsert.get(
      item.owner,
      item.namespace,
      item.key,
      item.keyId,
      Buffer.from(item.sealed),
      item.createdAt,
      item.updatedAt,
      item.expiresAt,
      item.ttlMinutes,
      item.embedding === null ? null : Buffer.from(item.embedding),
    ) as { rowid: number };
    dropTerms.run(rowid);
    if (item.terms !== '') addTerms.run(rowid, item.terms);
  });

  return {
    engine: 'sqlite',
    put: (item) => settle(() => void write.immediate(item)),
    get: (owner, namespace, key, now) =>
      settle(() => {
        const row = find.get(owner, namespace, key, now) as Row | undefined;
        return row === undefined ? undefined : itemOfRow(row);
      }),
    refresh: (owner, items, now) =>
      settle(() =>
        db
          .transaction(() => {
            for (const { namespace, key } of items) refresh.run(now, owner, namespace, key);
          })
          .immediate(),
      ),
    delete: (owner, namespace, key) =>
      settle(() => {
        const row = findRow.get(owner, namespace, key) as { rowid: number } | undefined;
        if (row !== undefined) deleteRow.immediate(row.rowid);
      }),
    candidates: ({ owner, prefix, terms, embedded, now, limit, offset }: CandidateQuery) =>
      settle((): Candidate[] => {
        const rows = (
          embedded === true
            ? listedEmbedded.all(owner, ...prefixParameters(now, prefix), limit, offset)
            : terms === undefined
              ? listed.all(owner, ...prefixParameters(now, prefix), limit, offset)
              : terms.length === 0
                ? []
                : matched.all(anyOf(terms), owner, ...prefixParameters(now, prefix), limit, offset)
        ) as Row[];
        return rows.map((row) => ({ ...itemOfRow(row), rank: row.rank ?? null }));
      }),
    namespaces: (owner, prefix, now) =>
      settle(() =>
        (namespaces.all(owner, ...prefixParameters(now, prefix)) as { namespace: string }[]).map(
          (row) => row.namespace,
        ),
      ),
    sweep: (now) =>
      settle(() => {
        const rows = expired.all(now) as { rowid: number }[];
        db.transaction(() => {
          for (const { rowid } of rows) removeRow(rowid);
        }).immediate();
        return rows.length;
      }),
    close: () => settle(() => void db.close()),
  };
}
