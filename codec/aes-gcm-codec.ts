/**
 * The payload codec: AES-256-GCM with Node's crypto, the scheme of Temporal's encryption sample.
 * A payload becomes `binary/encrypted` with the key id in its metadata and, as data, a random
 * 12-byte nonce, the ciphertext of the whole original payload (metadata included) and the 16-byte
 * tag. The key id is authenticated too. Decoding leaves payloads that are not encrypted alone, so
 * histories written before encryption still read.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { EncryptionKeyUnknownError, PayloadDecryptionError } from './errors';

export const encryptedEncoding = 'binary/encrypted';
export const keyIdMetadata = 'encryption-key-id';

const nonceBytes = 12;
const tagBytes = 16;
const utf8 = new TextEncoder();
const text = new TextDecoder();

/** A decoded key: 32 bytes. */
export interface EncryptionKey {
  id: string;
  key: Buffer;
}

export class AesGcmCodec implements PayloadCodec {
  readonly #keys: ReadonlyMap<string, Buffer>;
  readonly #current: EncryptionKey;

  /** `keys[0]` encrypts; every key decrypts what it encrypted. */
  constructor(keys: readonly EncryptionKey[]) {
    const [first] = keys;
    if (first === undefined) throw new Error('the payload codec needs at least one key');
    for (const { id, key } of keys)
      if (key.length !== 32) throw new Error(`key "${id}" is ${key.length} bytes; AES-256 needs 32`);
    this.#current = first;
    this.#keys = new Map(keys.map(({ id, key }) => [id, key]));
  }

  /** The id new payloads are encrypted with. */
  get keyId(): string {
    return this.#current.id;
  }

  // Synchronous work in an executor: a failure rejects the promise rather than throwing.
  encode(payloads: Payload[]): Promise<Payload[]> {
    return new Promise((resolve) => resolve(payloads.map((payload) => this.encrypt(payload))));
  }

  decode(payloads: Payload[]): Promise<Payload[]> {
    return new Promise((resolve) => resolve(payloads.map((payload) => this.decrypt(payload))));
  }

  encrypt(payload: Payload): Payload {
    const { id, key } = this.#current;
    const nonce = randomBytes(nonceBytes);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.setAAD(utf8.encode(id));
    const plain = temporal.api.common.v1.Payload.encode(payload).finish();
    const sealed = Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: { encoding: utf8.encode(encryptedEncoding), [keyIdMetadata]: utf8.encode(id) },
      data: sealed,
    };
  }

  decrypt(payload: Payload): Payload {
    const encoding = payload.metadata?.encoding;
    if (encoding === undefined || encoding === null || text.decode(encoding) !== encryptedEncoding)
      return payload;
    const rawId = payload.metadata?.[keyIdMetadata];
    const id = rawId === undefined || rawId === null ? undefined : text.decode(rawId);
    if (id === undefined)
      throw new PayloadDecryptionError(
        'an encrypted payload carries no key id; it cannot be read',
        undefined,
      );
    const key = this.#keys.get(id);
    if (key === undefined) throw new EncryptionKeyUnknownError(id, [...this.#keys.keys()]);
    const data = payload.data ?? new Uint8Array();
    if (data.length < nonceBytes + tagBytes)
      throw new PayloadDecryptionError(`an encrypted payload (key "${id}") is truncated`, id);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, nonceBytes));
      decipher.setAAD(utf8.encode(id));
      decipher.setAuthTag(data.subarray(data.length - tagBytes));
      const plain = Buffer.concat([
        decipher.update(data.subarray(nonceBytes, data.length - tagBytes)),
        decipher.final(),
      ]);
      return temporal.api.common.v1.Payload.decode(plain);
    } catch (error) {
      // GCM checks the tag before anything is returned: a wrong key never yields garbage.
      throw new PayloadDecryptionError(
        `this data does not decrypt with the configured key "${id}": that key is not the one that encrypted it (or the data was altered)`,
        id,
        { cause: error },
      );
    }
  }
}
