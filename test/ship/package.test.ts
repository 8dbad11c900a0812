/**
 * Keel as another team gets it: `npm pack` (which builds, through `prepack`), the tarball
 * installed into a fresh project, that project type-checked on `"lib": ["ES2022"]` with `strict`
 * against Keel's declaration files only, then run with plain `node` (no tsx): its workflow starts
 * a Keel agent as a child (`keel/workflow`), with Keel's data converter (`keel/data-converter`),
 * while the Keel worker is the installed package's own `keel` bin. One pack, one install.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { testEncryptionKeys } from '../helpers/encryption';
import { offlineFirst, repositoryRoot, run } from '../helpers/shipping';
import { testAddress } from '../helpers/temporal';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';

const typescript = path.join(repositoryRoot, 'node_modules', 'typescript', 'bin', 'tsc');
const temporalVersion = '1.23.0';

const consumerWorkflows = `import { runAgent, type AgentResult } from 'keel/workflow';

export interface AskInput {
  task: string;
  keelTaskQueue: string;
}

/** Another team's workflow: a Keel agent as a child, with the one field it must name. */
export async function askKeelWorkflow(input: AskInput): Promise<AgentResult> {
  return runAgent({ task: input.task, config: { model: 'scripted:demo' }, task_queue: input.keelTaskQueue });
}
`;

const consumerMain = `import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { agentService } from 'keel/agent-service';
import { parseConfig } from 'keel/config';
import { loadDataConverter } from 'keel/data-converter';
import type { askKeelWorkflow } from './workflows';

async function main(): Promise<void> {
  const [task, keelTaskQueue, taskQueue] = process.argv.slice(2) as [string, string, string];
  const config = parseConfig(process.env, process.cwd());
  const address = config.temporal.address ?? '127.0.0.1:7233';
  const dataConverter = await loadDataConverter(config.encryption);
  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address }),
    taskQueue,
    workflowsPath: require.resolve('./workflows'),
    dataConverter,
  });
  const client = new Client({ connection: await Connection.connect({ address }), dataConverter });
  const result = await worker.runUntil(
    client.workflow.execute<typeof askKeelWorkflow>('askKeelWorkflow', {
      taskQueue,
      workflowId: 'consumer-' + taskQueue,
      args: [{ task, keelTaskQueue }],
    }),
  );
  console.log(JSON.stringify({ service: agentService.name, result }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
`;

const consumerTsconfig = {
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2022'],
    module: 'nodenext',
    moduleResolution: 'nodenext',
    strict: true,
    types: ['node'],
    rootDir: 'src',
    outDir: 'dist',
    // Every declaration file is checked too, Keel's among them: they must hold on ES2022.
    skipLibCheck: false,
  },
  include: ['src'],
};

let directory: string;
let consumer: string;
let packedFiles: string[];
let keelWorker: WorkerProcess | undefined;

beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'keel-package-'));
  await run('npm', ['pack', '--pack-destination', directory], { cwd: repositoryRoot, timeoutMs: 600_000 });
  const tarball = (await readdir(directory)).find((name) => name.endsWith('.tgz'));
  if (tarball === undefined) throw new Error(`npm pack wrote no tarball into ${directory}`);
  packedFiles = (await run('tar', ['-tzf', path.join(directory, tarball)], { cwd: directory }))
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.replace(/^package\//, ''));

  consumer = path.join(directory, 'consumer');
  await run('mkdir', ['-p', path.join(consumer, 'src')], { cwd: directory });
  const manifest = {
    name: 'keel-consumer',
    private: true,
    type: 'commonjs',
    dependencies: {
      keel: `file:../${tarball}`,
      '@temporalio/client': temporalVersion,
      '@temporalio/worker': temporalVersion,
      '@temporalio/workflow': temporalVersion,
    },
    // @temporalio/common's declarations import 'ms' without depending on its types: a project that
    // checks every declaration file (as this one does, for Keel's) needs them; Keel's need nothing.
    devDependencies: { '@types/node': '20.19.43', '@types/ms': '2.1.0' },
  };
  await writeFile(path.join(consumer, 'package.json'), JSON.stringify(manifest, null, 2));
  await writeFile(path.join(consumer, 'tsconfig.json'), JSON.stringify(consumerTsconfig, null, 2));
  await writeFile(path.join(consumer, 'src', 'workflows.ts'), consumerWorkflows);
  await writeFile(path.join(consumer, 'src', 'main.ts'), consumerMain);
  await run('npm', ['install', ...offlineFirst], { cwd: consumer, timeoutMs: 600_000 });
}, 900_000);

afterAll(async () => {
  await keelWorker?.stop('SIGTERM');
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

describe('the package another team installs', () => {
  it('holds the build and its declarations, and no TypeScript source', () => {
    expect(packedFiles).toEqual(
      expect.arrayContaining([
        'package.json',
        'cli/bin.cjs',
        'dist/cli/keel.js',
        'dist/workflows/agents/index.js',
        'dist/workflows/agents/index.d.ts',
        'dist/codec/data-converter.d.ts',
        'web/dist/index.html',
        // What `keel up` builds the Temporal CLI from when none is found (decision 0495).
        'launch/temporal-cli-build/go.mod',
        'launch/temporal-cli-build/go.sum',
        'launch/temporal-cli-build/tools.go',
      ]),
    );
    expect(packedFiles.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
    expect(packedFiles.filter((file) => file.startsWith('test/') || file.startsWith('bench/'))).toEqual([]);
  });

  it('type-checks and compiles a strict project on lib ES2022 against its declarations', async () => {
    await expect(run(process.execPath, [typescript, '-p', '.'], { cwd: consumer })).resolves.toBeDefined();
  }, 300_000);

  it('runs a child agent from that project with node alone, the Keel worker being its keel bin', async () => {
    const keelTaskQueue = `keel-package-${randomUUID()}`;
    keelWorker = await startWorkerProcess({
      program: { args: [path.join(consumer, 'node_modules', '.bin', 'keel')], cwd: consumer },
      env: {
        KEEL_TASK_QUEUE: keelTaskQueue,
        KEEL_DATA_DIR: path.join(directory, 'keel-data'),
        KEEL_WORKFLOW_BUNDLE: '',
      },
      // It bundles the package's workflows as it starts: half a minute on an idle machine.
      readyTimeoutMs: 240_000,
    });
    const output = await run(
      process.execPath,
      ['dist/main.js', 'Say hello to the packaging test.', keelTaskQueue, `consumer-${randomUUID()}`],
      {
        cwd: consumer,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          TEMPORAL_ADDRESS: testAddress(),
          KEEL_ENCRYPTION_KEYS: testEncryptionKeys,
        },
      },
    );
    const { service, result } = JSON.parse(output.trim().split('\n').pop()!) as {
      service: string;
      result: { status: string; answer?: string; runs: number };
    };
    expect(service).toBe('keel-agents');
    expect(result).toMatchObject({ status: 'completed', runs: 1 });
    expect(result.answer).toContain('Say hello to the packaging test.');
  }, 300_000);
});
