/** API tokens (`KEEL_API_TOKENS`) and encryption keys (`KEEL_ENCRYPTION_KEYS`): their shapes and parsers. */

/** Shorter tokens are refused at start: a guessable token is no authentication. */
export const minimumTokenLength = 16;

/** An API caller: the owner its token stands for. */
export interface ApiToken {
  owner: string;
  token: string;
}

/** One key of `KEEL_ENCRYPTION_KEYS`: the id stored beside each payload it encrypts, and the key. */
export interface EncryptionKeySpec {
  id: string;
  /** 32 bytes, base64 (44 characters) or hex (64). */
  secret: string;
}

export interface EncryptionConfig {
  /**
   * `KEEL_ENCRYPTION_KEYS` (`id:key,…`): the first encrypts, all decrypt. Unset: the key file in
   * the data dir (`keyFile`), generated once on the embedded default.
   */
  keys: EncryptionKeySpec[] | undefined;
  /** `<data dir>/encryption-keys`, mode 0600, same format, one key per line. */
  keyFile: string;
  /** Whether a missing key file may be generated: only when Keel runs its own dev server. */
  mayGenerate: boolean;
  /**
   * Browser origins allowed to call `/codec/*` (the Temporal Web UI): `KEEL_CODEC_CORS_ORIGINS`,
   * comma-separated. @default the dev server's UI, `http://127.0.0.1:<ui port>` and `http://localhost:<ui port>`
   */
  corsOrigins: string[];
  /**
   * The secret in the Web UI's codec endpoint (`/codec/ui/<token>`), which works without an API
   * token: the Temporal UI cannot send one (`KEEL_CODEC_UI_TOKEN`; `keel up` makes one when the
   * API has tokens). Unset: no such endpoint.
   */
  uiToken: string | undefined;
}

export function parseTokens(raw: string | undefined): ApiToken[] {
  if (raw === undefined) return [];
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const separator = entry.indexOf(':');
      return separator === -1
        ? { owner: 'default', token: entry }
        : { owner: entry.slice(0, separator).trim(), token: entry.slice(separator + 1).trim() };
    });
}

/** Why a token list must not start the API, or undefined: auth never fails open on a typo. */
export function tokenProblem(raw: string): string | undefined {
  const tokens = parseTokens(raw);
  if (tokens.length === 0) return 'names no token; use owner:token,… (or unset it on a loopback-only API)';
  for (const [index, { owner, token }] of tokens.entries()) {
    const which = `entry ${index + 1}${owner === '' ? '' : ` (owner "${owner}")`}`;
    if (owner === '') return `${which} has no owner before ":"`;
    // Temporal's SQL visibility (PostgreSQL, as under `keel up --cluster`) reads a `?` in a query's
    // value as a parameter: the owner's searches would answer 503.
    if (owner.includes('?')) return `${which} has a "?" in its owner name; owner names cannot hold one`;
    if (token.length < minimumTokenLength)
      return `${which} has a token of ${token.length} characters; use at least ${minimumTokenLength} (e.g. openssl rand -hex 24)`;
  }
  return undefined;
}

const keyIdPattern = /^[A-Za-z0-9._-]{1,64}$/;
const base64KeyPattern = /^[A-Za-z0-9+/]{43}=$/;
const hexKeyPattern = /^[0-9a-fA-F]{64}$/;

/**
 * Parses a key list (`id:key`, separated by commas or new lines; each key 32 bytes as base64 or
 * hex), or says what is wrong with it, never echoing a key.
 */
export function parseEncryptionKeys(raw: string): EncryptionKeySpec[] | string {
  const entries = raw
    .split(/[,\n]/)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '' && !entry.startsWith('#'));
  if (entries.length === 0)
    return 'names no key; use id:key,… with 32-byte keys (e.g. k1:$(openssl rand -base64 32))';
  const keys: EncryptionKeySpec[] = [];
  for (const [index, entry] of entries.entries()) {
    const separator = entry.indexOf(':');
    const id = separator === -1 ? '' : entry.slice(0, separator).trim();
    const secret = separator === -1 ? entry : entry.slice(separator + 1).trim();
    const which = `entry ${index + 1}${id === '' ? '' : ` (key "${id}")`}`;
    if (!keyIdPattern.test(id))
      return `${which} needs an id before ":" (letters, digits, . _ -, at most 64), as id:key`;
    if (!base64KeyPattern.test(secret) && !hexKeyPattern.test(secret))
      return `${which} is not a 32-byte key (44 characters of base64 or 64 of hex; e.g. openssl rand -base64 32)`;
    if (keys.some((key) => key.id === id)) return `${which} repeats the id "${id}"`;
    keys.push({ id, secret });
  }
  return keys;
}
