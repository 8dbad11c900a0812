/**
 * A stored payload as a worker before results were capped wrote one for a 300 MB read: the
 * protobuf of a `json/plain` tool result of `bytes` characters, zlib-compressed (`binary/zlib`)
 * to a few hundred KB, under Temporal's 2 MiB limit, yet past what the codec inflates. Streamed,
 * so the test never holds the 300 MB.
 */
import { createDeflate } from 'node:zlib';
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { zlibEncoding } from '../../codec/zlib-codec';

function varint(value: number): Buffer {
  const bytes: number[] = [];
  for (let rest = value; ; rest = Math.floor(rest / 128)) {
    if (rest < 128) {
      bytes.push(rest);
      return Buffer.from(bytes);
    }
    bytes.push((rest % 128) | 128);
  }
}

export async function oversizedToolResult(bytes = 300 * 1024 * 1024): Promise<Payload> {
  const head = Buffer.from('{"is_error":false,"content":"');
  const tail = Buffer.from('"}');
  const metadata = temporal.api.common.v1.Payload.encode({
    metadata: { encoding: Buffer.from('json/plain') },
  }).finish();
  const deflate = createDeflate({ level: 9 });
  const chunks: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise((resolve, reject) => deflate.on('end', resolve).on('error', reject));
  const write = (chunk: Buffer) =>
    new Promise<void>((resolve) => (deflate.write(chunk) ? resolve() : deflate.once('drain', resolve)));
  // Field 2 (data), length-delimited: tag 0x12, then the length as a varint.
  await write(
    Buffer.concat([metadata, Buffer.from([0x12]), varint(head.length + bytes + tail.length), head]),
  );
  const block = Buffer.alloc(1024 * 1024, 'a');
  for (let written = 0; written < bytes; written += block.length)
    await write(block.subarray(0, Math.min(block.length, bytes - written)));
  deflate.end(tail);
  await done;
  return { metadata: { encoding: Buffer.from(zlibEncoding) }, data: Buffer.concat(chunks) };
}
