/**
 * Keel's data converter, built here and only here: every client (API, tests, benchmarks, the
 * recorder) and every worker takes it from this module, so every payload Temporal stores is
 * encrypted and every failure's message and stack trace with it. Large payloads are compressed
 * first (decision 0250): the codecs run in order on encode, in reverse on decode.
 */
import type { DataConverter } from '@temporalio/common';
import type { EncryptionConfig } from '../platform/config';
import { AesGcmCodec, type EncryptionKey } from './aes-gcm-codec';
import { loadEncryptionKeys } from './keys';
import { ZlibCodec } from './zlib-codec';

/** The module the workflow bundle, the worker and the clients load the failure converter from. */
export const failureConverterPath = require.resolve('../common/failure-converter');

/** The data converter for `keys` (the first encrypts). */
export function keelDataConverter(keys: readonly EncryptionKey[]): DataConverter {
  return { payloadCodecs: [new ZlibCodec(), new AesGcmCodec(keys)], failureConverterPath };
}

/** Loads the configured keys (generating them on the embedded default) and builds the converter. */
export async function loadDataConverter(encryption: EncryptionConfig): Promise<DataConverter> {
  return keelDataConverter(await loadEncryptionKeys(encryption));
}

/** The encrypting codec inside a converter built here. */
export function codecOf(converter: DataConverter): AesGcmCodec {
  const codec = converter.payloadCodecs?.find((candidate) => candidate instanceof AesGcmCodec);
  if (!(codec instanceof AesGcmCodec)) throw new Error('not a Keel data converter');
  return codec;
}
