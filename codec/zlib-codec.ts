/**
 * Compression before encryption: a payload whose encoded form passes `minBytes` becomes
 * `binary/zlib`, its data the zlib-compressed protobuf of the whole original payload (metadata
 * included), the shape of the Go SDK's `ZlibCodec`. It runs first on encode and last on decode, so
 * the AES codec encrypts (and authenticates) the compressed payload, marker included. Decoding
 * leaves every other payload alone, so payloads written before compression still read.
 *
 * Why: a long conversation carries its state across continue-as-new, and the server warns once a
 * command's arguments pass 512 KiB together; JSON transcripts compress several times over.
 */
import { deflateSync, inflateSync } from 'node:zlib';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import type { DroppedPayload } from '../common/tools';

export const zlibEncoding = 'binary/zlib';

const utf8 = new TextEncoder();
const text = new TextDecoder();

export interface ZlibCodecOptions {
  /** Payloads whose encoded form is smaller are left as they are. @default 4096 */
  minBytes?: number;
  /** zlib's level: 1 is the fastest. @default 1 */
  level?: number;
}

/** Largest payload a decode expands to: Temporal's own limit on a payload is 2 MiB, compressed. */
export const maxInflatedBytes = 256 * 1024 * 1024;

/**
 * The placeholder for a payload that expands past `maxInflatedBytes`: failing its decode would
 * fail every workflow task of its thread, for ever (decision 0321).
 */
function dropped(compressedBytes: number): Payload {
  const value: DroppedPayload = {
    is_error: true,
    content:
      `[Keel dropped this tool output: stored compressed in ${compressedBytes} bytes, it expands past ` +
      `${maxInflatedBytes} bytes, more than Keel reads back. Its tool produced far more than a tool result may hold.]`,
    keel_dropped_payload: { compressed_bytes: compressedBytes, limit_bytes: maxInflatedBytes },
  };
  return { metadata: { encoding: utf8.encode('json/plain') }, data: utf8.encode(JSON.stringify(value)) };
}

export class ZlibCodec implements PayloadCodec {
  readonly #minBytes: number;
  readonly #level: number;

  constructor(options: ZlibCodecOptions = {}) {
    this.#minBytes = options.minBytes ?? 4096;
    this.#level = options.level ?? 1;
  }

  // Synchronous work in an executor: a failure rejects the promise rather than throwing.
  encode(payloads: Payload[]): Promise<Payload[]> {
    return new Promise((resolve) => resolve(payloads.map((payload) => this.compress(payload))));
  }

  decode(payloads: Payload[]): Promise<Payload[]> {
    return new Promise((resolve) => resolve(payloads.map((payload) => this.decompress(payload))));
  }

  compress(payload: Payload): Payload {
    const plain = temporal.api.common.v1.Payload.encode(payload).finish();
    if (plain.length < this.#minBytes) return payload;
    const compressed = deflateSync(plain, { level: this.#level });
    // Incompressible data (already compressed, random) stays as it was.
    if (compressed.length >= plain.length) return payload;
    return { metadata: { encoding: utf8.encode(zlibEncoding) }, data: compressed };
  }

  decompress(payload: Payload): Payload {
    const encoding = payload.metadata?.encoding;
    if (encoding === undefined || encoding === null || text.decode(encoding) !== zlibEncoding) return payload;
    const data = payload.data ?? new Uint8Array();
    let plain: Uint8Array;
    try {
      plain = inflateSync(data, { maxOutputLength: maxInflatedBytes });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return dropped(data.length);
      throw error;
    }
    return temporal.api.common.v1.Payload.decode(plain);
  }
}
