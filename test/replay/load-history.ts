/**
 * Reads a history file as the Temporal CLI writes it (`temporal workflow show --output json`).
 *
 * Not `historyFromJSON` from @temporalio/common: with this lock file, @temporalio/common and
 * @temporalio/proto each get their own copy of protobufjs 8, and the common copy's JSON reader
 * refuses the proto copy's types ("type must be a Type"). The proto copy's reader accepts them.
 * Once `npm dedupe` leaves one copy, `historyFromJSON` can replace this file.
 */
import type { temporal } from '@temporalio/proto';
import { patchProtobufRoot } from '@temporalio/proto/lib/patch-protobuf-root';
import * as proto from '@temporalio/proto';

interface ProtoJson {
  fromJson(type: unknown, json: unknown, options: { ignoreUnknownFields: boolean }): unknown;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const protojson = require('@temporalio/proto/node_modules/protobufjs/ext/protojson') as ProtoJson;
const historyType = (patchProtobufRoot(proto) as unknown as { lookupType(name: string): unknown }).lookupType(
  'temporal.api.history.v1.History',
);

export function loadHistory(json: unknown): temporal.api.history.v1.IHistory {
  return protojson.fromJson(historyType, json, {
    ignoreUnknownFields: true,
  }) as temporal.api.history.v1.IHistory;
}
