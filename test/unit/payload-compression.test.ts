import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { AesGcmCodec, type EncryptionKey } from '../../codec/aes-gcm-codec';
import { keelDataConverter } from '../../codec/data-converter';
import { maxInflatedBytes, ZlibCodec, zlibEncoding } from '../../codec/zlib-codec';
import { oversizedToolResult } from '../helpers/oversized-payload';

const key: EncryptionKey = { id: 'k1', key: randomBytes(32) };
const payload = (value: unknown) => defaultPayloadConverter.toPayload(value);
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');
/** A payload as comparable values (decoded protobuf gives Buffers where the converter gave Uint8Arrays). */
const shown = (payloads: Payload[]) =>
  payloads.map((one) => ({
    metadata: Object.fromEntries(
      Object.entries(one.metadata ?? {}).map(([name, value]) => [name, text(value)]),
    ),
    data: Buffer.from(one.data ?? []).toString('base64'),
  }));
const codecs = (): PayloadCodec[] => keelDataConverter([key]).payloadCodecs ?? [];

async function encode(chain: PayloadCodec[], payloads: Payload[]): Promise<Payload[]> {
  for (const codec of chain) payloads = await codec.encode(payloads);
  return payloads;
}
async function decode(chain: PayloadCodec[], payloads: Payload[]): Promise<Payload[]> {
  for (const codec of [...chain].reverse()) payloads = await codec.decode(payloads);
  return payloads;
}

/** A long conversation's transcript as the workflow carries it: JSON, much of it alike. */
const transcript = (turns: number) =>
  Array.from({ length: turns }, (_, index) => [
    { id: `m${2 * index + 1}`, role: 'user', content: [{ type: 'text', text: `turn ${index + 1}: hello` }] },
    {
      id: `m${2 * index + 2}`,
      role: 'assistant',
      content: [
        { type: 'text', text: `(scripted model — not a real model) You said: "turn ${index + 1}: hello"` },
      ],
      model: 'scripted:demo',
      stop_reason: 'end_turn',
      usage: { input_tokens: 12 * index, output_tokens: 14 },
    },
  ]).flat();

describe('payload compression before encryption', () => {
  it('compresses a large payload inside the encryption and decodes it back exactly', async () => {
    const original = payload({ transcript: transcript(300) });
    const [stored] = await encode(codecs(), [original]);
    expect(text(stored!.metadata!.encoding)).toBe('binary/encrypted');
    // Under the encryption: the zlib marker, authenticated with the rest.
    const [opened] = await new AesGcmCodec([key]).decode([stored!]);
    expect(text(opened!.metadata!.encoding)).toBe(zlibEncoding);
    // A long conversation's JSON compresses several times over.
    expect(stored!.data!.length * 4).toBeLessThan(original.data!.length);
    const [decoded] = await decode(codecs(), [stored!]);
    expect(shown([decoded!])).toEqual(shown([original]));
    expect(defaultPayloadConverter.fromPayload(decoded!)).toEqual({ transcript: transcript(300) });
  });

  it('leaves small payloads and incompressible ones uncompressed', async () => {
    const zlib = new ZlibCodec();
    const small = payload({ run_id: 'r1', status: 'completed' });
    const noise = {
      metadata: { encoding: new TextEncoder().encode('binary/plain') },
      data: randomBytes(64 * 1024),
    };
    expect(shown(await zlib.encode([small, noise]))).toEqual(shown([small, noise]));
    const opened = await new AesGcmCodec([key]).decode(await encode(codecs(), [small]));
    expect(shown(opened)).toEqual(shown([small]));
  });

  it('still reads payloads written before compression: encrypted ones and plaintext ones', async () => {
    const large = payload({ transcript: transcript(100) });
    const [encryptedBefore] = await new AesGcmCodec([key]).encode([large]);
    const plaintextBefore = payload({ old: true });
    expect(shown(await decode(codecs(), [encryptedBefore!, plaintextBefore]))).toEqual(
      shown([large, plaintextBefore]),
    );
  });

  it('reads what it wrote at every size around its threshold', async () => {
    const zlib = new ZlibCodec({ minBytes: 200 });
    for (let length = 100; length <= 300; length += 5) {
      const original = payload('a'.repeat(length));
      const [encoded] = await zlib.encode([original]);
      expect(shown(await zlib.decode([encoded!]))).toEqual(shown([original]));
    }
    const [below] = await zlib.encode([payload('a'.repeat(100))]);
    expect(text(below!.metadata!.encoding)).toBe('json/plain');
    const [above] = await zlib.encode([payload('a'.repeat(300))]);
    expect(text(above!.metadata!.encoding)).toBe(zlibEncoding);
  });

  it('fails on corrupt compressed data instead of returning garbage', async () => {
    const broken = { metadata: { encoding: new TextEncoder().encode(zlibEncoding) }, data: randomBytes(100) };
    await expect(new ZlibCodec().decode([broken])).rejects.toThrow();
  });

  it('decodes a stored payload that expands past its bound to the same error result every time, not a failure', async () => {
    const stored = await oversizedToolResult();
    expect(stored.data!.length).toBeLessThan(2 * 1024 * 1024);
    // Sealed as a worker stores it: compressed, then encrypted.
    const [sealed] = await new AesGcmCodec([key]).encode([stored]);
    const first = await decode(codecs(), [sealed!]);
    const again = await decode(codecs(), [sealed!]);
    expect(shown(again)).toEqual(shown(first));
    expect(defaultPayloadConverter.fromPayload(first[0]!)).toEqual({
      is_error: true,
      content: expect.stringMatching(
        new RegExp(
          `^\\[Keel dropped this tool output: stored compressed in ${stored.data!.length} bytes, it expands past ${maxInflatedBytes} bytes`,
        ),
      ),
      keel_dropped_payload: { compressed_bytes: stored.data!.length, limit_bytes: maxInflatedBytes },
    });
  });
});
