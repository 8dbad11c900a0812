/**
 * The Store API's configuration: its database (`KEEL_STORE_URL`), embeddings (`KEEL_STORE_EMBED`)
 * and the fields each namespace is indexed by (`KEEL_STORE_INDEX`).
 */

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

/**
 * What an item put without `index` (null) is indexed by, declared per namespace prefix
 * (`KEEL_STORE_INDEX`, a JSON object: `{"memories": ["text"], "logs": false, "": ["$"]}`) as
 * LangGraph's `store.index.fields` declares it for its whole store (decision 0451). The longest
 * prefix that holds the item's namespace wins (`""` holds every one); fields are paths as a put's
 * `index` names them, `false` indexes nothing, `null` the whole value. A put that names its own
 * `index` keeps it. @default none: an item put without `index` is indexed whole
 */
export interface StoreIndexRule {
  prefix: readonly string[];
  fields: false | readonly string[] | null;
}

/** `KEEL_STORE_INDEX` read, longest prefix first, or what is wrong with it. */
export function parseStoreIndex(raw: string | undefined): StoreIndexRule[] | string {
  if (raw === undefined) return [];
  const shape =
    'KEEL_STORE_INDEX: give a JSON object from namespace prefix (labels joined by dots) to a list of field paths, false or null';
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return shape;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return shape;
  const rules: StoreIndexRule[] = [];
  for (const [prefix, fields] of Object.entries(parsed as Record<string, unknown>)) {
    const labels = prefix === '' ? [] : prefix.split('.');
    if (labels.includes('')) return `KEEL_STORE_INDEX: the prefix "${prefix}" has an empty label`;
    const paths =
      Array.isArray(fields) &&
      fields.length > 0 &&
      fields.every((field) => typeof field === 'string' && field !== '');
    if (fields !== false && fields !== null && !paths)
      return `KEEL_STORE_INDEX: "${prefix}" must name a list of field paths, false or null`;
    rules.push({ prefix: labels, fields: fields as StoreIndexRule['fields'] });
  }
  return rules.sort((left, right) => right.prefix.length - left.prefix.length);
}
