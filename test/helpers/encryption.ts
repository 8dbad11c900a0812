/**
 * The fixed key every test client and worker encrypts with (the replay histories in
 * test/replay/histories/ were recorded with it). A test key only: it protects nothing.
 */
import type { DataConverter, Payload } from '@temporalio/common';
import { keelDataConverter } from '../../codec/data-converter';
import { decodeKey } from '../../codec/keys';
import { type EncryptionKeySpec, parseEncryptionKeys } from '../../platform/config';

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

/** A stored (encrypted, perhaps compressed) payload's data as text, decoded with the test key. */
export async function decryptedText(payload: Payload): Promise<string> {
  let payloads = [payload];
  for (const codec of [...(testDataConverter().payloadCodecs ?? [])].reverse())
    payloads = await codec.decode(payloads);
  return Buffer.from(payloads[0]?.data ?? []).toString('utf8');
}
