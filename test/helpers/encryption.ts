/**
 * The fixed key every test client and worker encrypts with (the replay histories in
 * test/replay/histories/ were recorded with it). A test key only: it protects nothing.
 */
import type { DataConverter, Payload } from '@temporalio/common';
import { codecOf, keelDataConverter } from '../../codec/data-converter';
import { decodeKey } from '../../codec/keys';
import { type EncryptionKeySpec, parseEncryptionKeys } from '../../common/config';

export const testEncryptionKeys = 'test-1:U5YOVoSAFkh0CekirBzDvwGy5KoOsJxQD/RphhaSMvI=';

export function testKeys(raw = testEncryptionKeys): EncryptionKeySpec[] {
  const keys = parseEncryptionKeys(raw);
  if (typeof keys === 'string') throw new Error(keys);
  return keys;
}

/** The converter of the test clients and workers. */
export function testDataConverter(raw = testEncryptionKeys): DataConverter {
  return keelDataConverter(testKeys(raw).map(decodeKey));
}

/** A stored (encrypted) payload's data as text, decrypted with the test key. */
export async function decryptedText(payload: Payload): Promise<string> {
  const [plain] = await codecOf(testDataConverter()).decode([payload]);
  return Buffer.from(plain?.data ?? []).toString('utf8');
}
