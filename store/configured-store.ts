/** The Store a process's configuration names: its database, Keel's keys, its embeddings provider. */
import { loadEncryptionKeys } from '../codec/keys';
import type { EncryptionKey } from '../codec/aes-gcm-codec';
import type { KeelConfig } from '../platform/config';
import { createEmbedder } from './embeddings';
import { Store } from './store';

/** `keys`: the keys already loaded, when the process has them. @default loaded at the first call */
export const configuredStore = (
  config: Pick<KeelConfig, 'store' | 'storeIndex' | 'encryption' | 'embeddings'>,
  keys: () => Promise<readonly EncryptionKey[]> = () => loadEncryptionKeys(config.encryption),
): Store =>
  new Store({
    config: config.store,
    keys,
    indexes: config.storeIndex,
    ...(config.embeddings === undefined ? {} : { embedder: createEmbedder(config.embeddings) }),
  });
