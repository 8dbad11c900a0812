/**
 * Re-records the replay histories in test/replay/histories/ from real runs: a fresh dev server
 * (continue-as-new suggested at 150 events), an in-process worker with the real activities and
 * the scripted model. Run it after a deliberate change to the workflow's commands, with
 * `npm run record-histories`, and commit the result together with the change.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import os from 'node:os';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { createActivities } from '../../activities';
import { parseConfig } from '../../common/config';
import { startDevServer } from '../../launch/dev-server';
import { ensureTemporalCli } from '../../launch/temporal-cli';
import { createKeelWorker } from '../../worker/create-worker';
import { TestConversation } from '../helpers/conversation';
import { testDataConverter, testEncryptionKeys } from '../helpers/encryption';

const historiesDir = path.join(__dirname, 'histories');

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'keel-record-'));
  const config = parseConfig(
    {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      KEEL_DATA_DIR: dataDir,
      KEEL_MODEL: 'scripted:demo',
      KEEL_TASK_QUEUE: 'record',
      KEEL_ENCRYPTION_KEYS: testEncryptionKeys,
    },
    process.cwd(),
  );
  const cliPath = await ensureTemporalCli(config, (line) => process.stderr.write(`${line}\n`));
  const port = 17_233 + Math.floor(Math.random() * 1000);
  const server = await startDevServer({
    cliPath,
    dataDir,
    port,
    uiPort: port + 1000,
    namespace: 'default',
    extraArgs: ['--dynamic-config-value', 'limit.historyCount.suggestContinueAsNew=150'],
  });
  const connection = await NativeConnection.connect({ address: server.address });
  const real = createActivities({ config });
  let hangTools = false;
  const worker = await createKeelWorker({
    connection,
    namespace: 'default',
    taskQueue: config.taskQueue,
    shutdownGraceS: 1,
    // Recorded encrypted with the test key, as every history is stored now.
    dataConverter: testDataConverter(),
    activities: {
      ...real,
      callModel: real.callModel,
      // A tool that stops heartbeating is what a crashed worker looks like from the server.
      // It still ends on cancellation (the worker's shutdown), so the recorder can exit.
      runTool: (input) =>
        hangTools
          ? new Promise((_, reject) =>
              Context.current().cancellationSignal.addEventListener('abort', () =>
                reject(new Error('stopped')),
              ),
            )
          : real.runTool(input),
    },
  });
  const running = worker.run();
  const client = new Client({
    connection: await Connection.connect({ address: server.address }),
    dataConverter: testDataConverter(),
  });
  const record = async (name: string, conversation: TestConversation, runId?: string): Promise<void> => {
    // The CLI writes the canonical proto JSON that historyFromJSON reads back.
    const args = ['workflow', 'show', '--address', server.address, '-w', conversation.handle.workflowId];
    const { stdout } = await promisify(execFile)(
      cliPath,
      [...args, ...(runId === undefined ? [] : ['-r', runId]), '--output', 'json'],
      {
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    const events = (JSON.parse(stdout) as { events: unknown[] }).events.length;
    await writeFile(path.join(historiesDir, `${name}.json`), stdout);
    process.stderr.write(`recorded ${name} (${events} events)\n`);
  };
  try {
    const plain = await TestConversation.start(client, config);
    await plain.ask('hello');
    await record('plain-turn', plain);

    const parallel = await TestConversation.start(client, config);
    await parallel.ask('run: echo alpha\nrun: echo beta\nread: missing.txt');
    await record('parallel-tools', parallel);

    const crashed = await TestConversation.start(client, config);
    hangTools = true;
    await crashed.ask('run: echo interrupted', {});
    hangTools = false;
    await crashed.ask('and after that?');
    await record('crash-recovered-turn', crashed);

    const long = await TestConversation.start(client, config);
    const firstRunId = (await long.handle.describe()).runId;
    for (let turn = 1; ; turn++) {
      await long.ask(`run: echo turn ${turn}`);
      if ((await long.handle.describe()).runId !== firstRunId) break;
    }
    await record('continue-as-new', long, firstRunId);
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
    await client.connection.close();
    await server.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
