/**
 * The Store API on PostgreSQL (`KEEL_STORE_URL=postgres://…`), through `pg`: the same calls as
 * the SQLite adapter, with the search terms in a `tsvector` (the `simple` configuration, for
 * blinded terms are no language) under a GIN index, ranked by `ts_rank`. Migrations run at
 * start under an advisory lock, so APIs starting together apply each once.
 */
import pg from 'pg';
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
     sealed BYTEA NOT NULL,
     terms TSVECTOR NOT NULL,
     created_at BIGINT NOT NULL,
     updated_at BIGINT NOT NULL,
     expires_at BIGINT,
     ttl_minutes DOUBLE PRECISION,
     PRIMARY KEY (owner, namespace, key)
   );
   CREATE INDEX store_items_updated ON store_items (owner, updated_at DESC);
   CREATE INDEX store_items_expiry ON store_items (expires_at) WHERE expires_at IS NOT NULL;
   CREATE INDEX store_items_terms ON store_items USING GIN (terms);`,
  // Decision 0451: an item's embedding, sealed (nonce, float32s, tag).
  `ALTER TABLE store_items ADD COLUMN embedding BYTEA;`,
];

/** Any number taken for this lock: it only keeps two starting APIs from migrating at once. */
const migrationLock = 4_350_435;

const columns =
  'owner, namespace, key, key_id, sealed, created_at, updated_at, expires_at, ttl_minutes, embedding';

/** Live items under a prefix; `$n` from `first`: now, prefix. */
const livePrefix = (first: number) =>
  `(expires_at IS NULL OR expires_at > $${first})
   AND ($${first + 1} = '' OR namespace = $${first + 1} OR starts_with(namespace, $${first + 1} || '.'))`;

async function migrate(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [migrationLock]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS store_migrations (version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)',
    );
    const { rows } = await client.query<{ version: number | null }>(
      'SELECT max(version) AS version FROM store_migrations',
    );
    const applied = rows[0]?.version ?? 0;
    for (const [index, sql] of migrations.entries()) {
      if (index + 1 <= applied) continue;
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await client.query('INSERT INTO store_migrations (version, applied_at) VALUES ($1, $2)', [
          index + 1,
          Date.now(),
        ]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      }
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [migrationLock]).catch(() => undefined);
    client.release();
  }
}

export async function openPostgresStore(url: string): Promise<StoreDatabase> {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  // An idle connection the server dropped must not take the API down with it.
  pool.on('error', () => undefined);
  try {
    await migrate(pool);
  } catch (error) {
    await pool.end();
    throw error;
  }
  return {
    engine: 'postgres',
    async put(item: ItemWrite) {
      await pool.query(
        `INSERT INTO store_items (${columns}, terms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $11, to_tsvector('simple', $10))
         ON CONFLICT (owner, namespace, key) DO UPDATE SET key_id = excluded.key_id, sealed = excluded.sealed, created_at = excluded.created_at,
           terms = excluded.terms, updated_at = excluded.updated_at, expires_at = excluded.expires_at,
           ttl_minutes = excluded.ttl_minutes, embedding = excluded.embedding`,
        [
          item.owner,
          item.namespace,
          item.key,
          item.keyId,
          Buffer.from(item.sealed),
          item.createdAt,
          item.updatedAt,
          item.expiresAt,
          item.ttlMinutes,
          item.terms,
          item.embedding === null ? null : Buffer.from(item.embedding),
        ],
      );
    },
    async get(owner, namespace, key, now) {
      const { rows } = await pool.query<ItemRow>(
        `SELECT ${columns} FROM store_items WHERE owner = $1 AND namespace = $2 AND key = $3
           AND (expires_at IS NULL OR expires_at > $4)`,
        [owner, namespace, key, now],
      );
      return rows[0] === undefined ? undefined : itemOfRow(rows[0]);
    },
    async refresh(owner, items, now) {
      if (items.length === 0) return;
      await pool.query(
        `UPDATE store_items SET expires_at = $2 + CAST(ttl_minutes * 60000 AS BIGINT)
         FROM unnest($3::text[], $4::text[]) AS touched (namespace, key)
         WHERE store_items.owner = $1 AND store_items.namespace = touched.namespace
           AND store_items.key = touched.key AND ttl_minutes IS NOT NULL`,
        [owner, now, items.map((item) => item.namespace), items.map((item) => item.key)],
      );
    },
    async delete(owner, namespace, key) {
      await pool.query('DELETE FROM store_items WHERE owner = $1 AND namespace = $2 AND key = $3', [
        owner,
        namespace,
        key,
      ]);
    },
    async candidates({
      owner,
      prefix,
      terms,
      embedded,
      now,
      limit,
      offset,
    }: CandidateQuery): Promise<Candidate[]> {
      if (terms !== undefined && terms.length === 0 && embedded !== true) return [];
      const { rows } =
        embedded === true
          ? await pool.query<ItemRow>(
              `SELECT ${columns}, NULL::float8 AS rank FROM store_items
               WHERE owner = $1 AND embedding IS NOT NULL AND ${livePrefix(2)}
               ORDER BY updated_at DESC, namespace, key LIMIT $4 OFFSET $5`,
              [owner, now, prefix, limit, offset],
            )
          : terms === undefined
            ? await pool.query<ItemRow>(
                `SELECT ${columns}, NULL::float8 AS rank FROM store_items WHERE owner = $1 AND ${livePrefix(2)}
               ORDER BY updated_at DESC, namespace, key LIMIT $4 OFFSET $5`,
                [owner, now, prefix, limit, offset],
              )
            : await pool.query<ItemRow>(
                `SELECT ${columns}, ts_rank(terms, to_tsquery('simple', $6)) AS rank FROM store_items
               WHERE owner = $1 AND ${livePrefix(2)} AND terms @@ to_tsquery('simple', $6)
               ORDER BY rank DESC, updated_at DESC LIMIT $4 OFFSET $5`,
                [owner, now, prefix, limit, offset, terms.join(' | ')],
              );
      return rows.map((row) => ({ ...itemOfRow(row), rank: row.rank ?? null }));
    },
    async namespaces(owner, prefix, now) {
      const { rows } = await pool.query<{ namespace: string }>(
        `SELECT DISTINCT namespace FROM store_items WHERE owner = $1 AND ${livePrefix(2)} ORDER BY namespace`,
        [owner, now, prefix],
      );
      return rows.map((row) => row.namespace);
    },
    async sweep(now) {
      const { rowCount } = await pool.query('DELETE FROM store_items WHERE expires_at <= $1', [now]);
      return rowCount ?? 0;
    },
    async close() {
      await pool.end();
    },
  };
}
