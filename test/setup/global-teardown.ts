import { rm } from 'node:fs/promises';

export default async function globalTeardown(): Promise<void> {
  if (process.env.KEEL_TEST_DIR !== undefined)
    await rm(process.env.KEEL_TEST_DIR, { recursive: true, force: true });
}
