/**
 * Store values at rest: sealed with AES-256-GCM under Keel's encryption keys (the first seals,
 * each opens what it sealed, found by the id kept beside the item; decision 0082), bound to
 * their owner, namespace and key so a sealed value copied to another row does not open. Search
 * terms are blinded, HMAC-SHA-256 under a key derived from each encryption key: the database
 * indexes and ranks them without holding a word of the value (decision 0435).
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type { EncryptionKey } from '../codec/aes-gcm-codec';
import { PayloadDecryptionError } from '../codec/errors';

const nonceBytes = 12;
const tagBytes = 16;
/** Bytes of a blinded term kept (as hex): 96 bits, collisions beyond any store's size. */
const termBytes = 12;

/** Where a sealed value belongs; authenticated with it. */
export interface ItemAddress {
  owner: string;
  namespace: string;
  key: string;
}

/** What a sealed part of an item is: its value, or its embedding (decision 0451). */
type Part = 'keel-store-v1' | 'keel-store-vector-v1';

const associated = (
  keyId: string,
  { owner, namespace, key }: ItemAddress,
  part: Part = 'keel-store-v1',
): Buffer => Buffer.from(JSON.stringify([part, keyId, owner, namespace, key]), 'utf8');

export class StoreSealer {
  readonly #current: EncryptionKey;
  readonly #keys: ReadonlyMap<string, Buffer>;
  /** One term key per encryption key: a term is looked up under each, so rotation loses no item. */
  readonly #termKeys: readonly { id: string; key: Buffer }[];

  constructor(keys: readonly EncryptionKey[]) {
    const [first] = keys;
    if (first === undefined) throw new Error('the store needs at least one encryption key');
    this.#current = first;
    this.#keys = new Map(keys.map(({ id, key }) => [id, key]));
    this.#termKeys = keys.map(({ id, key }) => ({
      id,
      key: Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'keel-store-terms-v1', 32)),
    }));
  }

  seal(value: unknown, address: ItemAddress): { keyId: string; sealed: Uint8Array } {
    const { id, key } = this.#current;
    const nonce = randomBytes(nonceBytes);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.setAAD(associated(id, address));
    const plain = Buffer.from(JSON.stringify(value), 'utf8');
    const sealed = Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return { keyId: id, sealed };
  }

  /**
   * An item's embedding sealed under the key its value was (`keyId`), bound to the item: a
   * vector of secret text says much of that text, so it is kept no plainer than the value.
   */
  sealVector(vector: readonly number[], keyId: string, address: ItemAddress): Uint8Array {
    const key = this.#keys.get(keyId)!;
    const nonce = randomBytes(nonceBytes);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.setAAD(associated(keyId, address, 'keel-store-vector-v1'));
    const plain = Buffer.from(Float32Array.from(vector).buffer);
    return Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  }

  /** The embedding `sealVector` sealed; undefined when it does not open (a key gone, a row altered). */
  openVector(keyId: string, sealed: Uint8Array, address: ItemAddress): Float32Array | undefined {
    const key = this.#keys.get(keyId);
    if (key === undefined) return undefined;
    try {
      const data = Buffer.from(sealed);
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, nonceBytes));
      decipher.setAAD(associated(keyId, address, 'keel-store-vector-v1'));
      decipher.setAuthTag(data.subarray(data.length - tagBytes));
      const plain = Buffer.concat([
        decipher.update(data.subarray(nonceBytes, data.length - tagBytes)),
        decipher.final(),
      ]);
      // Copied: a Float32Array needs its own aligned buffer, which a pooled Buffer may not give.
      return new Float32Array(new Uint8Array(plain).buffer);
    } catch {
      return undefined;
    }
  }

  open(keyId: string, sealed: Uint8Array, address: ItemAddress): unknown {
    const key = this.#keys.get(keyId);
    if (key === undefined)
      throw new PayloadDecryptionError(
        `a store item was sealed with the encryption key "${keyId}", which is not configured`,
        keyId,
      );
    try {
      const data = Buffer.from(sealed);
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, nonceBytes));
      decipher.setAAD(associated(keyId, address));
      decipher.setAuthTag(data.subarray(data.length - tagBytes));
      const plain = Buffer.concat([
        decipher.update(data.subarray(nonceBytes, data.length - tagBytes)),
        decipher.final(),
      ]);
      return JSON.parse(plain.toString('utf8')) as unknown;
    } catch (error) {
      throw new PayloadDecryptionError(
        `a store item does not open with the encryption key "${keyId}" (another key under that id, or the row was altered)`,
        keyId,
        { cause: error },
      );
    }
  }

  /** `words` blinded under the sealing key, for an item's index. */
  blindForIndex(words: readonly string[]): string[] {
    const [current] = this.#termKeys;
    return words.map((word) => blind(current!.key, word));
  }

  /** `words` blinded under every key, for a query that must find items sealed before a rotation. */
  blindForQuery(words: readonly string[]): string[] {
    return [...new Set(this.#termKeys.flatMap(({ key }) => words.map((word) => blind(key, word))))];
  }
}

const blind = (key: Buffer, word: string): string =>
  createHmac('sha256', key).update(word, 'utf8').digest().subarray(0, termBytes).toString('hex');
