/**
 * Where the codec's keys come from: `KEEL_ENCRYPTION_KEYS`, else the key file in the data dir.
 * On the embedded default (Keel runs its own dev server) a missing file is generated once, with
 * one random key, mode 0600; every later start, and every process of that data dir, reuses it.
 * Against a cluster nothing is generated: each worker and API must share the same keys, so a
 * missing key stops the process at start.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  ConfigError,
  parseEncryptionKeys,
  type EncryptionConfig,
  type EncryptionKeySpec,
} from '../platform/config';
import type { EncryptionKey } from './aes-gcm-codec';

/** Decodes a key that the configuration already validated (base64 or hex, 32 bytes). */
export function decodeKey(spec: EncryptionKeySpec): EncryptionKey {
  const key = Buffer.from(spec.secret, spec.secret.length === 64 ? 'hex' : 'base64');
  if (key.length !== 32) throw new ConfigError(`encryption key "${spec.id}" is not 32 bytes`);
  return { id: spec.id, key };
}

/** A fresh key list's text: one random key named after today (`kYYYYMMDD`). */
export function generateKeyLine(now = new Date()): string {
  const id = `k${now.toISOString().slice(0, 10).replaceAll('-', '')}`;
  return `${id}:${randomBytes(32).toString('base64')}\n`;
}

async function readKeyFile(file: string): Promise<EncryptionKeySpec[]> {
  const info = await stat(file);
  if ((info.mode & 0o077) !== 0)
    throw new ConfigError(
      `${file} holds the encryption keys but others may read it (mode ${(info.mode & 0o777).toString(8)}); run chmod 600 ${file}`,
    );
  const keys = parseEncryptionKeys(await readFile(file, 'utf8'));
  if (typeof keys === 'string') throw new ConfigError(`${file}: ${keys}`);
  return keys;
}

/** Writes the key file unless it exists; whoever links it first wins, the others read theirs. */
async function generateKeyFile(file: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(draft, generateKeyLine(), { mode: 0o600, flag: 'wx' });
  try {
    await link(draft, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await rm(draft, { force: true });
  }
}

/** The keys this process encrypts and decrypts with (the first encrypts); fails with what to do. */
export async function loadEncryptionKeys(encryption: EncryptionConfig): Promise<EncryptionKey[]> {
  if (encryption.keys !== undefined) return encryption.keys.map(decodeKey);
  try {
    return (await readKeyFile(encryption.keyFile)).map(decodeKey);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (!encryption.mayGenerate)
    throw new ConfigError(
      `KEEL_ENCRYPTION_KEYS is not set and there is no key file at ${encryption.keyFile}: with TEMPORAL_ADDRESS every worker and API must encrypt with the same keys, so set KEEL_ENCRYPTION_KEYS=id:key (e.g. k1:$(openssl rand -base64 32)) on each of them`,
    );
  await generateKeyFile(encryption.keyFile);
  return (await readKeyFile(encryption.keyFile)).map(decodeKey);
}
