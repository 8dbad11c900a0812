import { rm } from 'node:fs/promises';

export default async function globalTeardown(): Promise<void> {
  await Promise.all((globalThis.keelTestEnvironments ?? []).map((environment) => environment.teardown()));
  if (process.env.KEEL_TEST_DIR !== undefined)
    await rm(process.env.KEEL_TEST_DIR, { recursive: true, force: true });
}
