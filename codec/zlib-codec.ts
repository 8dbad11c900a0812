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
const maxInflatedBytes = 256 * 1024 * 1024;

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
    const plain = inflateSync(payload.data ?? new Uint8Array(), { maxOutputLength: maxInflatedBytes });
    return temporal.api.common.v1.Payload.decode(plain);
  }
}
