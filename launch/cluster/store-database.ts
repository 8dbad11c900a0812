/**
 * The Store API's database in the cluster's PostgreSQL (decision 0435): `keel_store`, made once
 * beside Temporal's two, its tables made by the API's own migrations when the store first opens.
 */
import pg from 'pg';

export const storeDatabase = 'keel_store';

export interface StoreDatabaseOptions {
  port: number;
  user: string;
  password: string;
}

/** The URL the API reaches the store at (`KEEL_STORE_URL`). */
export const storeDatabaseUrl = ({ port, user, password }: StoreDatabaseOptions): string =>
  `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${storeDatabase}`;

/** Creates the database unless it exists (safe on every start). */
export async function ensureStoreDatabase(options: StoreDatabaseOptions): Promise<void> {
  const client = new pg.Client({
    host: '127.0.0.1',
    port: options.port,
    user: options.user,
    password: options.password,
    database: 'postgres',
  });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [storeDatabase]);
    if (rowCount === 0) await client.query(`CREATE DATABASE ${storeDatabase}`);
  } catch (error) {
    // Two starts at once: the other one made it.
    if ((error as { code?: string }).code !== '42P04') throw error;
  } finally {
    await client.end();
  }
}
