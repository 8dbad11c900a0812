/** Registers Keel's search attributes on the namespace when they are missing. */
import type { NativeConnection } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { SearchAttributeType } from '@temporalio/common';
import type { Logger } from 'pino';
import { allSearchAttributes } from '../common/search-attributes';

const indexedTypes: Record<string, temporal.api.enums.v1.IndexedValueType> = {
  [SearchAttributeType.KEYWORD]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  [SearchAttributeType.DOUBLE]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
  [SearchAttributeType.INT]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT,
  [SearchAttributeType.KEYWORD_LIST]: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

export async function ensureSearchAttributes(
  connection: Pick<NativeConnection, 'operatorService'>,
  namespace: string,
  logger: Logger,
  /** Rethrow instead of warning (`keel up --cluster` owns its cluster, so a failure is a bug). */
  options: { required?: boolean } = {},
): Promise<void> {
  try {
    const existing = await connection.operatorService.listSearchAttributes({ namespace });
    const known = new Set([
      ...Object.keys(existing.customAttributes ?? {}),
      ...Object.keys(existing.systemAttributes ?? {}),
    ]);
    const missing = allSearchAttributes.filter((key) => !known.has(key.name));
    if (missing.length === 0) return;
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((key) => [key.name, indexedTypes[key.type]!])),
    });
    logger.info({ added: missing.map((key) => key.name) }, 'registered search attributes');
  } catch (error) {
    if (options.required === true) throw error;
    // Temporal Cloud registers attributes through its own console; say so, and carry on.
    logger.warn(
      { err: error },
      'could not register Keel search attributes; add KeelStatus, KeelOwner, KeelModel (Keyword), KeelCostUsd (Double), KeelTurns (Int) to the namespace',
    );
  }
}
