import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter } from '@temporalio/common';
import { AesGcmCodec, type EncryptionKey } from '../../codec/aes-gcm-codec';
import { EncryptionKeyUnknownError, PayloadDecryptionError } from '../../codec/errors';
import { loadEncryptionKeys } from '../../codec/keys';
import { parseConfig } from '../../platform/config';

const key = (id: string): EncryptionKey => ({ id, key: randomBytes(32) });
const payload = (value: unknown) => defaultPayloadConverter.toPayload(value);
const text = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('utf8');

describe('the payload codec (AES-256-GCM)', () => {
  it('encrypts the whole payload, metadata included, and decrypts it back exactly', async () => {
    const codec = new AesGcmCodec([key('k1')]);
    const original = payload({ secret: 'the launch code is 0000' });
    const [encrypted] = await codec.encode([original]);
    expect(text(encrypted!.metadata!.encoding)).toBe('binary/encrypted');
    expect(text(encrypted!.metadata!['encryption-key-id'])).toBe('k1');
    expect(text(encrypted!.data)).not.toContain('launch code');
    expect(text(encrypted!.data)).not.toContain('json/plain');
    const [decrypted] = await codec.decode([encrypted!]);
    expect(defaultPayloadConverter.fromPayload(decrypted!)).toEqual({ secret: 'the launch code is 0000' });
    expect(text(decrypted!.metadata!.encoding)).toBe('json/plain');
  });

  it('uses a fresh nonce each time: the same payload never encrypts to the same bytes', async () => {
    const codec = new AesGcmCodec([key('k1')]);
    const [a, b] = await codec.encode([payload('same'), payload('same')]);
    expect(Buffer.from(a!.data!).equals(Buffer.from(b!.data!))).toBe(false);
  });

  it('leaves payloads written before encryption as they are', async () => {
    const codec = new AesGcmCodec([key('k1')]);
    const plain = payload({ old: true });
    expect(await codec.decode([plain])).toEqual([plain]);
  });

  it('encrypts with the first key and decrypts with any, so keys rotate', async () => {
    const old = key('old');
    const [written] = await new AesGcmCodec([old]).encode([payload('from before')]);
    const rotated = new AesGcmCodec([key('new'), old]);
    expect(defaultPayloadConverter.fromPayload((await rotated.decode([written!]))[0]!)).toBe('from before');
    const [fresh] = await rotated.encode([payload('now')]);
    expect(text(fresh!.metadata!['encryption-key-id'])).toBe('new');
  });

  it('names a removed key id instead of failing vaguely', async () => {
    const [written] = await new AesGcmCodec([key('gone')]).encode([payload('x')]);
    const attempt = new AesGcmCodec([key('kept')]).decode([written!]);
    await expect(attempt).rejects.toThrow(EncryptionKeyUnknownError);
    await expect(attempt).rejects.toThrow(/encrypted with key "gone".*\(kept\).*KEEL_ENCRYPTION_KEYS/);
  });

  it('refuses a wrong key under the right id, a changed byte and a changed key id: never garbage', async () => {
    const [written] = await new AesGcmCodec([key('k1')]).encode([payload('x')]);
    await expect(new AesGcmCodec([key('k1')]).decode([written!])).rejects.toThrow(
      /does not decrypt with the configured key "k1"/,
    );
    const right = key('k1');
    const codec = new AesGcmCodec([right, { id: 'k2', key: right.key }]);
    const [sealed] = await codec.encode([payload('x')]);
    const flipped = Buffer.from(sealed!.data!);
    flipped[20]! ^= 1;
    await expect(codec.decode([{ ...sealed!, data: flipped }])).rejects.toThrow(PayloadDecryptionError);
    // The key id is authenticated: relabelling the payload for another key fails too.
    const relabelled = {
      ...sealed!,
      metadata: { ...sealed!.metadata, 'encryption-key-id': Buffer.from('k2') },
    };
    await expect(codec.decode([relabelled])).rejects.toThrow(PayloadDecryptionError);
  });
});

describe('encryption keys', () => {
  const config = (env: Record<string, string>, dataDir: string) =>
    parseConfig({ KEEL_DATA_DIR: dataDir, ...env }, '/').encryption;
  const good = `k1:${randomBytes(32).toString('base64')}`;

  it.each([
    ['a list of nothing', ' , ', /KEEL_ENCRYPTION_KEYS: names no key/],
    ['a key without an id', randomBytes(32).toString('base64'), /entry 1 needs an id before ":"/],
    ['a short key', 'k1:c2hvcnQ=', /entry 1 \(key "k1"\) is not a 32-byte key/],
    ['a 16-byte hex key', `k1:${randomBytes(16).toString('hex')}`, /not a 32-byte key/],
    ['a repeated id', `${good},${good}`, /entry 2 \(key "k1"\) repeats the id "k1"/],
  ])('refuses %s at start, without echoing a key', (_case, keys, message) => {
    expect(() => parseConfig({ KEEL_ENCRYPTION_KEYS: keys }, '/')).toThrow(message);
    try {
      parseConfig({ KEEL_ENCRYPTION_KEYS: keys }, '/');
    } catch (error) {
      const secret = keys.split(',')[0]!.split(':').pop()!.trim();
      if (secret !== '') expect((error as Error).message).not.toContain(secret);
    }
  });

  it('takes base64 and hex keys, the first one encrypting', async () => {
    const hex = `k2:${randomBytes(32).toString('hex')}`;
    const keys = await loadEncryptionKeys(config({ KEEL_ENCRYPTION_KEYS: `${good}\n${hex}` }, '/nowhere'));
    expect(keys.map(({ id, key }) => [id, key.length])).toEqual([
      ['k1', 32],
      ['k2', 32],
    ]);
  });

  it('generates one key into the data dir on the embedded default, mode 0600, and reuses it', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'keel-keys-'));
    const encryption = config({}, dataDir);
    const [first, again] = await Promise.all([
      loadEncryptionKeys(encryption),
      loadEncryptionKeys(encryption),
    ]);
    expect(first).toHaveLength(1);
    expect(again[0]!.key.equals(first[0]!.key)).toBe(true);
    expect((await stat(encryption.keyFile)).mode & 0o777).toBe(0o600);
    expect((await loadEncryptionKeys(encryption))[0]!.key.equals(first[0]!.key)).toBe(true);
    expect(await readFile(encryption.keyFile, 'utf8')).toMatch(/^k\d{8}:[A-Za-z0-9+/]{43}=\n$/);
  });

  it('refuses a key file others can read', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'keel-keys-'));
    const file = path.join(dataDir, 'encryption-keys');
    await writeFile(file, `${good}\n`);
    await chmod(file, 0o644);
    await expect(loadEncryptionKeys(config({}, dataDir))).rejects.toThrow(/others may read it.*chmod 600/);
  });

  it('refuses to start against a cluster without keys rather than invent one', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'keel-keys-'));
    await expect(
      loadEncryptionKeys(config({ TEMPORAL_ADDRESS: 'temporal.example:7233' }, dataDir)),
    ).rejects.toThrow(
      /KEEL_ENCRYPTION_KEYS is not set.*with TEMPORAL_ADDRESS every worker and API must encrypt with the same keys/,
    );
  });
});
