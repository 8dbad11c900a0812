/**
 * The extension host against real child processes: small MCP servers with good and bad manners
 * (test/fakes/extension-server.ts) and the reference filesystem server from npm.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pino from 'pino';
import { ExtensionHost } from '../../activities/extensions';
import { ToolRegistry } from '../../activities/tools';
import type { ToolContext } from '../../activities/tools/registry';
import { Sandbox } from '../../activities/tools/sandbox';
import { parseConfig } from '../../platform/config';
import { eventually } from '../helpers/temporal';
import { alive } from './chaos-helpers';

jest.setTimeout(60_000);

const root = path.resolve(__dirname, '../..');
const fakeServer = (manners: string, log: string) => ({
  command: process.execPath,
  args: ['--import', 'tsx', path.join(root, 'test/fakes/extension-server.ts'), manners],
  cwd: root,
  env: { EXTENSION_LOG: log },
});

const logLines = async (file: string): Promise<string[]> =>
  (await readFile(file, 'utf8').catch(() => '')).split('\n').filter((line) => line !== '');

const environment = { PATH: process.env.PATH ?? '' };

describe('the extension host', () => {
  let directory: string;
  let log: string;
  let file: string;
  let registry: ToolRegistry;
  let host: ExtensionHost | undefined;
  const logger = pino({ level: 'silent' });
  const context = (): ToolContext => ({
    threadId: 't',
    workspace: directory,
    signal: new AbortController().signal,
    idempotencyKey: 't:1',
    environment: {},
    sandbox: new Sandbox(parseConfig({}, '/').sandbox, undefined),
    networkHosts: [],
  });

  beforeEach(async () => {
    directory = await mkdtemp(path.join(process.env.KEEL_TEST_DIR ?? '/tmp', 'ext-'));
    log = path.join(directory, 'extension.log');
    file = path.join(directory, 'extensions.json');
    registry = new ToolRegistry();
  });

  afterEach(async () => {
    await host?.stop();
    host = undefined;
  });

  const writeConfig = (servers: Record<string, unknown>) => writeFile(file, JSON.stringify({ servers }));

  it('offers each server tool with flags from the file, runs it, and stops every server by its protocol', async () => {
    await writeConfig({
      polite: { ...fakeServer('polite', log), read_only: ['echo'] },
      stubborn: fakeServer('stubborn', log),
      files: {
        command: process.execPath,
        args: [
          path.join(root, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js'),
          directory,
        ],
        read_only: ['read_text_file', 'list_directory'],
        sensitive: false,
      },
    });
    host = await ExtensionHost.start({ file, registry, logger, environment, watchFile: false });
    expect(
      registry.flagsFor(['polite__echo', 'polite__mark', 'files__read_text_file', 'files__write_file']),
    ).toEqual({
      polite__echo: { sideEffects: false, sensitive: true },
      polite__mark: { sideEffects: true, sensitive: true },
      files__read_text_file: { sideEffects: false, sensitive: false },
      files__write_file: { sideEffects: true, sensitive: false },
    });
    expect(await registry.get('polite__echo')!.run({ text: 'hi' }, context())).toEqual({
      is_error: false,
      content: 'hi',
    });
    await writeFile(path.join(directory, 'note.txt'), 'from disk');
    const read = await registry
      .get('files__read_text_file')!
      .run({ path: path.join(directory, 'note.txt') }, context());
    expect(read).toEqual({ is_error: false, content: 'from disk' });

    const pids = [...host.servers().values()].map((server) => server.pid);
    expect(pids.every(alive)).toBe(true);
    const stopping = host.stop();
    host = undefined;
    await stopping;
    expect(pids.filter(alive)).toEqual([]);
    const lines = await logLines(log);
    expect(lines).toEqual(expect.arrayContaining([expect.stringMatching(/^shutdown closing/)]));
    // The stubborn server got the request too, ignored it and SIGTERM, and only SIGKILL ended it.
    expect(lines.filter((line) => line.startsWith('shutdown closing'))).toHaveLength(2);
    expect(lines.some((line) => line.startsWith('ignored SIGTERM'))).toBe(true);
    expect(registry.schemas()).toEqual([]);
  });

  it('answers a call in flight when its server crashes, and restarts the server', async () => {
    await writeConfig({ crashy: fakeServer('crashy', log) });
    host = await ExtensionHost.start({ file, registry, logger, environment, watchFile: false });
    const server = host.servers().get('crashy')!;
    const firstPid = server.pid;
    const outcome = await registry.get('crashy__crash')!.run({}, context());
    expect(outcome.is_error).toBe(true);
    expect(outcome.content).toMatch(/crashed.*may have partly run/);
    await eventually(
      () => Promise.resolve(server.pid !== firstPid && alive(server.pid) ? true : undefined),
      20_000,
      'a restart',
    );
    expect(await registry.get('crashy__echo')!.run({ text: 'back' }, context())).toEqual({
      is_error: false,
      content: 'back',
    });
  });

  it('closes a server whose reply never ends past 4 MiB, says so in the result, and restarts it', async () => {
    await writeConfig({ flooding: fakeServer('polite', log) });
    host = await ExtensionHost.start({ file, registry, logger, environment, watchFile: false });
    const server = host.servers().get('flooding')!;
    const firstPid = server.pid;
    const started = Date.now();
    const outcome = await registry.get('flooding__flood')!.run({}, context());
    expect(outcome).toEqual({
      is_error: true,
      content:
        'Extension "flooding" sent more than 4 MiB without ending its message during the call to "flood"; Keel closed it and restarts it. The tool may have partly run.',
    });
    expect(Date.now() - started).toBeLessThan(15_000);
    await eventually(
      () => Promise.resolve(server.pid !== firstPid && alive(server.pid) ? true : undefined),
      20_000,
      'a restart',
    );
    expect(alive(firstPid)).toBe(false);
    expect(await registry.get('flooding__echo')!.run({ text: 'back' }, context())).toEqual({
      is_error: false,
      content: 'back',
    });
  });

  it('stops a disabled server and restarts a changed one when the file changes', async () => {
    await writeConfig({ a: fakeServer('polite', log), b: fakeServer('polite', log) });
    host = await ExtensionHost.start({ file, registry, logger, environment });
    const [a, b] = ['a', 'b'].map((name) => host!.servers().get(name)!);
    await writeConfig({
      a: { ...fakeServer('polite', log), disabled: true },
      b: { ...fakeServer('polite', log), read_only: true },
    });
    await eventually(
      () => Promise.resolve(registry.flagsFor(['b__echo']).b__echo?.sideEffects === false ? true : undefined),
      20_000,
      'the reload',
    );
    expect(registry.get('a__echo')).toBeUndefined();
    const lines = await logLines(log);
    expect(lines).toContain(`shutdown disabled ${a!.pid}`);
    expect(lines).toContain(`shutdown reload ${b!.pid}`);
    expect([a!.pid, b!.pid].filter(alive)).toEqual([]);
  });

  it('rejects an extensions file that does not follow the schema, naming the field', async () => {
    await writeConfig({ bad: { args: ['x'] } });
    await expect(
      ExtensionHost.start({ file, registry, logger, environment, watchFile: false }),
    ).rejects.toThrow(/servers\.bad\.command/);
  });
});
