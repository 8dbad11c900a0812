/**
 * The credential of the worker's live text endpoint (decision 0340): an HMAC the API computes and
 * the worker checks, scoped to one workflow and valid for a minute. Its key is derived (HKDF) from
 * Keel's encryption keys, which every API and worker of a deployment already shares; it is never
 * the encryption key itself, so a token reveals nothing about what encrypts the payloads.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { EncryptionKey } from './aes-gcm-codec';

/** How long a token is good for: enough to connect, never enough to keep. */
export const liveTokenLifetimeMs = 60_000;
const info = 'keel live text v1';

export class LiveTextKeys {
  readonly #keys: ReadonlyMap<string, Buffer>;
  readonly #current: string;

  /** `keys[0]` signs; any of them verifies (a rotation adds the new key before it signs with it). */
  constructor(keys: readonly EncryptionKey[]) {
    const [first] = keys;
    if (first === undefined) throw new Error('live text tokens need at least one key');
    this.#current = first.id;
    this.#keys = new Map(
      keys.map(({ id, key }) => [id, Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), info, 32))]),
    );
  }

  /** A token for reading `workflowId`'s live text until `now + liveTokenLifetimeMs`. */
  sign(workflowId: string, now = Date.now()): string {
    const expires = now + liveTokenLifetimeMs;
    return `${this.#current}.${expires}.${this.#mac(this.#current, workflowId, expires)}`;
  }

  /** Whether `token` was signed by a holder of one of our keys, for `workflowId`, and is still good. */
  verify(token: string, workflowId: string, now = Date.now()): boolean {
    const parts = token.split('.');
    if (parts.length !== 3) return false;
    const [keyId, expiresText, mac] = parts as [string, string, string];
    const expires = Number(expiresText);
    if (!/^\d{1,15}$/.test(expiresText) || expires <= now || expires > now + 2 * liveTokenLifetimeMs)
      return false;
    if (!this.#keys.has(keyId)) return false;
    const expected = Buffer.from(this.#mac(keyId, workflowId, expires));
    const given = Buffer.from(mac);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  #mac(keyId: string, workflowId: string, expires: number): string {
    return createHmac('sha256', this.#keys.get(keyId)!)
      .update(`${workflowId}\n${expires}`)
      .digest('base64url');
  }
}
