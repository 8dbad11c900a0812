/**
 * `npm start` (`keel up`) refuses a configuration that would leave the API open, before it starts
 * anything; a Keel process refuses a port it cannot have.
 */
import { execFile } from 'node:child_process';
import { type AddressInfo, createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { refusedExitCode } from '../../launch/supervisor';
import { keelApiEnv } from '../helpers/keel-up';

const run = promisify(execFile);

async function keelUp(env: Record<string, string>): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'cli/keel.ts', 'up'], {
      cwd: path.resolve(__dirname, '../..'),
      env: { PATH: process.env.PATH, HOME: process.env.HOME, KEEL_DATA_DIR: '/nonexistent/keel', ...env },
      timeout: 30_000,
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, output: failed.stdout + failed.stderr };
  }
}

describe('keel up with unusable API tokens', () => {
  it.each([
    ['a list of nothing', ',', /KEEL_API_TOKENS: names no token/],
    [
      'an owner without a token',
      'alice:',
      /KEEL_API_TOKENS: entry 1 \(owner "alice"\) has a token of 0 characters/,
    ],
    ['a short token', 'alice:hunter2', /KEEL_API_TOKENS: .*use at least 16/],
  ])('refuses %s at start with a clear message (exit 2)', async (_case, tokens, message) => {
    const { code, output } = await keelUp({ KEEL_API_TOKENS: tokens });
    expect(code).toBe(2);
    expect(output).toMatch(/^keel: invalid configuration: /);
    expect(output).toMatch(message);
    expect(output).not.toMatch(/Starting|Keel is running/);
  });
});

describe('keel up with unusable encryption keys', () => {
  it.each([
    [
      'a key of the wrong length',
      'k1:c2hvcnQ=',
      /KEEL_ENCRYPTION_KEYS: entry 1 \(key "k1"\) is not a 32-byte key/,
    ],
    [
      'a key without an id',
      'MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=',
      /KEEL_ENCRYPTION_KEYS: entry 1 needs an id/,
    ],
  ])('refuses %s at start with a clear message (exit 2)', async (_case, keys, message) => {
    const { code, output } = await keelUp({ KEEL_ENCRYPTION_KEYS: keys });
    expect(code).toBe(2);
    expect(output).toMatch(message);
    expect(output).not.toMatch(/Starting|Keel is running/);
  });

  it('refuses a worker for a cluster that names no key, before it connects (exit 2)', async () => {
    try {
      await run(process.execPath, ['--import', 'tsx', 'cli/keel.ts', 'worker'], {
        cwd: path.resolve(__dirname, '../..'),
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          TEMPORAL_ADDRESS: '127.0.0.1:1',
          KEEL_DATA_DIR: '/nonexistent/keel',
        },
        timeout: 30_000,
      });
      throw new Error('the worker started');
    } catch (error) {
      const failed = error as { code: number; stderr: string };
      expect(failed.code).toBe(2);
      expect(failed.stderr).toMatch(
        /^keel: KEEL_ENCRYPTION_KEYS is not set .* set KEEL_ENCRYPTION_KEYS=id:key/,
      );
    }
  });
});

describe('keel api on a port something else took after keel up checked it', () => {
  it('says so in one sentence and exits with the refused code, which the supervisor does not restart', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      await run(process.execPath, ['--import', 'tsx', 'cli/keel.ts', 'api'], {
        cwd: path.resolve(__dirname, '../..'),
        env: keelApiEnv({ KEEL_API_PORT: String(port), KEEL_DATA_DIR: '/nonexistent/keel' }),
        timeout: 60_000,
      });
      throw new Error('the API started');
    } catch (error) {
      const failed = error as { code: number; stderr: string };
      expect(failed.code).toBe(refusedExitCode);
      expect(failed.stderr).toBe(
        `keel: the API's port ${port} on 127.0.0.1 is in use: stop what listens there, or set KEEL_API_PORT to another port.\n`,
      );
    } finally {
      taken.close();
    }
  });
});
