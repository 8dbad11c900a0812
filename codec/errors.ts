/** Why a payload could not be decrypted. Each names the key id, never a key. */
import { KeelError } from '../common/errors';

/** Any failure to decrypt a payload: the thread it belongs to cannot be read with these keys. */
export class PayloadDecryptionError extends KeelError {
  override readonly name: string = 'PayloadDecryptionError';
  constructor(
    message: string,
    readonly keyId: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The payload names a key id that the configured keys do not hold (it was removed). */
export class EncryptionKeyUnknownError extends PayloadDecryptionError {
  override readonly name = 'EncryptionKeyUnknownError';
  constructor(keyId: string, known: readonly string[]) {
    super(
      `this data was encrypted with key "${keyId}", which is not among the configured keys (${known.join(', ')}); add "${keyId}" back to KEEL_ENCRYPTION_KEYS to read it`,
      keyId,
    );
  }
}
