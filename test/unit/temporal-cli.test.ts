import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseConfig } from '../../platform/config';
import { startDevServer } from '../../launch/dev-server';
import {
  cachedCliPath,
  ensureTemporalCli,
  findTemporalCli,
  sqliteDriverVersion,
  TemporalCliUnavailable,
  temporalCliVersion,
} from '../../launch/temporal-cli';

async function executable(directory: string, name: string): Promise<string> {
  await mkdir(directory, { recursive: true });
  const file = path.join(directory, name);
  await writeFile(file, '#!/bin/sh\nexit 0\n');
  await chmod(file, 0o755);
  return file;
}

describe('finding the Temporal CLI', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'keel-cli-'));
  });
  const config = (env: Record<string, string>) =>
    parseConfig({ XDG_CACHE_HOME: path.join(root, 'cache'), PATH: path.join(root, 'empty'), ...env }, root);

  it('prefers TEMPORAL_CLI_PATH, then temporal on PATH, then the cache', async () => {
    const explicit = await executable(path.join(root, 'explicit'), 'temporal');
    const onPath = await executable(path.join(root, 'bin'), 'temporal');
    const cached = cachedCliPath(path.join(root, 'cache', 'keel'));
    await executable(path.dirname(cached), 'temporal');
    expect(await findTemporalCli(config({ TEMPORAL_CLI_PATH: explicit, PATH: path.join(root, 'bin') }))).toBe(
      explicit,
    );
    expect(await findTemporalCli(config({ PATH: path.join(root, 'bin') }))).toBe(onPath);
    expect(await findTemporalCli(config({}))).toBe(cached);
  });

  it('refuses a TEMPORAL_CLI_PATH that is not an executable', async () => {
    await expect(
      findTemporalCli(config({ TEMPORAL_CLI_PATH: path.join(root, 'missing') })),
    ).rejects.toBeInstanceOf(TemporalCliUnavailable);
  });

  it('says what to install, or to set TEMPORAL_ADDRESS, when there is neither a CLI nor Go', async () => {
    const attempt = ensureTemporalCli(config({}), () => {});
    await expect(attempt).rejects.toThrow(/Go is not installed.*TEMPORAL_CLI_PATH.*TEMPORAL_ADDRESS/s);
  });
});

describe('the CLI as Keel builds it (decision 0495)', () => {
  it('pins the CLI and a SQLite driver that closes the rows of a cancelled query', async () => {
    const goMod = await readFile(path.join(__dirname, '../../launch/temporal-cli-build/go.mod'), 'utf8');
    expect(goMod).toMatch(
      new RegExp(
        `^\\tgithub.com/temporalio/cli v${temporalCliVersion}$|^require github.com/temporalio/cli v${temporalCliVersion}$`,
        'm',
      ),
    );
    expect(goMod).toMatch(new RegExp(`^\\tmodernc.org/sqlite v${sqliteDriverVersion}( |$)`, 'm'));
    // 1.51.0: rows closed on cancel (1.40.1), no stray interrupt (1.42.2), an in-memory store kept.
    const [major, minor] = sqliteDriverVersion.split('.').map(Number);
    expect(major === 1 && minor! >= 51).toBe(true);
  });

  it('is what the tests run: the CLI they were given carries the mended driver', async () => {
    // The build records its modules; `go version -m` reads them (Go is how the CLI was built).
    const { stdout } = await promisify(execFile)('go', ['version', '-m', process.env.KEEL_TEST_CLI_PATH!]);
    expect(stdout).toMatch(new RegExp(`\\smodernc.org/sqlite\\s+v${sqliteDriverVersion}\\s`));
    expect(stdout).toMatch(new RegExp(`\\sgithub.com/temporalio/cli\\s+v${temporalCliVersion}\\s`));
  });
});

describe('the dev server', () => {
  let blocker: Server;
  const sockets = new Set<Socket>();
  afterEach(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
  });

  it('explains a port that is already taken', async () => {
    blocker = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'keel-port-'));
    const cliPath = process.env.KEEL_TEST_CLI_PATH!;
    await expect(
      startDevServer({ cliPath, dataDir, port, uiPort: port + 1, namespace: 'default' }),
    ).rejects.toThrow(/in use.*TEMPORAL_ADDRESS/);
  });
});
