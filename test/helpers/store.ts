import type { EncryptionKey } from '../../codec/aes-gcm-codec';
import type { StoreConfig } from '../../platform/config';
import { Store, type StoreOptions } from '../../store/store';

/**
 * Opens Stores on one database with the test's clock and keys, and keeps each it opens in
 * `stores` for the test's cleanup to close. `config` is read at each open, so a test may point
 * it at a fresh file per case.
 */
export function storeOpener(options: {
  config: () => StoreConfig;
  keys: EncryptionKey[];
  now: () => number;
}): { stores: Store[]; open: (keys?: EncryptionKey[], extra?: Partial<StoreOptions>) => Store } {
  const stores: Store[] = [];
  const open = (keys: EncryptionKey[] = options.keys, extra: Partial<StoreOptions> = {}) => {
    const store = new Store({
      config: options.config(),
      keys: () => Promise.resolve(keys),
      now: options.now,
      ...extra,
    });
    stores.push(store);
    return store;
  };
  return { stores, open };
}

type SearchInput = Parameters<Store['search']>[0];

/** Searches `store` as `owner` under `prefix`, the first ten, no filter or query unless `input` sets them. */
export const searchStore = (
  store: Store,
  owner: string,
  prefix: string[],
  input: Partial<SearchInput> = {},
): ReturnType<Store['search']> =>
  store.search({
    owner,
    prefix,
    filter: null,
    query: null,
    limit: 10,
    offset: 0,
    refreshTtl: false,
    ...input,
  });
