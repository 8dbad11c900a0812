/**
 * Keel's data converter, built here and only here: every client (API, tests, benchmarks, the
 * recorder) and every worker takes it from this module, so every payload Temporal stores is
 * encrypted and every failure's message and stack trace with it.
 */
import type { DataConverter } from '@temporalio/common';
import type { EncryptionConfig } from '../common/config';
import { AesGcmCodec, type EncryptionKey } from './aes-gcm-codec';
import { loadEncryptionKeys } from './keys';

/** The module the workflow bundle, the worker and the clients load the failure converter from. */
export const failureConverterPath = require.resolve('../common/failure-converter');

/** The data converter for `keys` (the first encrypts). */
export function keelDataConverter(keys: readonly EncryptionKey[]): DataConverter {
  return { payloadCodecs: [new AesGcmCodec(keys)], failureConverterPath };
}

/** Loads the configured keys (generating them on the embedded default) and builds the converter. */
export async function loadDataConverter(encryption: EncryptionConfig): Promise<DataConverter> {
  return keelDataConverter(await loadEncryptionKeys(encryption));
}

/** The codec inside a converter built here. */
export function codecOf(converter: DataConverter): AesGcmCodec {
  const codec = converter.payloadCodecs?.[0];
  if (!(codec instanceof AesGcmCodec)) throw new Error('not a Keel data converter');
  return codec;
}
