/** The Store API's configuration: its database (`KEEL_STORE_URL`) and embeddings (`KEEL_STORE_EMBED`). */

/**
 * The Store API's database (`KEEL_STORE_URL`): SQLite in a file, or PostgreSQL by URL.
 * @default SQLite at `<data dir>/store.db`
 */
export type StoreConfig = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

/** `KEEL_STORE_URL` read: `postgres://…` (or `postgresql://…`), `sqlite:<path>`, or unset. */
export function parseStoreUrl(raw: string | undefined, dataDir: string, cwd: string): StoreConfig | string {
  if (raw === undefined) return { kind: 'sqlite', file: `${dataDir}/store.db` };
  if (/^postgres(ql)?:\/\//i.test(raw)) return { kind: 'postgres', url: raw };
  if (raw.startsWith('sqlite:') && raw.length > 'sqlite:'.length) {
    const file = raw.slice('sqlite:'.length);
    return { kind: 'sqlite', file: file.startsWith('/') ? file : `${cwd}/${file}` };
  }
  return 'KEEL_STORE_URL: give postgres://user:password@host:port/database or sqlite:<path>';
}

/**
 * The Store's embeddings provider (`KEEL_STORE_EMBED=ollama:<model>` or `openai:<model>`, at
 * `OLLAMA_HOST` or `OPENAI_BASE_URL` with `OPENAI_API_KEY`): with one, a search's `query` ranks by
 * meaning (decision 0451). @default none: text search only
 */
export interface EmbeddingsConfig {
  provider: 'ollama' | 'openai';
  model: string;
  /** Ollama's host, or the OpenAI-compatible base URL (ending in `/v1`). */
  url: string;
  apiKey: string | undefined;
}
