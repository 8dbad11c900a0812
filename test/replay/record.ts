/**
 * Re-records the replay histories in test/replay/histories/ from real runs: a fresh dev server
 * (continue-as-new suggested at 150 events), an in-process worker that traces, with the real
 * activities and the scripted model. Run it after a deliberate change to the workflow's commands, with
 * `npm run record-histories`, and commit the result together with the change. Names after `--`
 * record only those scenarios (`npm run record-histories -- agent-parent task-conversation`).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import os from 'node:os';
import path from 'node:path';
import { Context } from '@temporalio/activity';
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { NativeConnection } from '@temporalio/worker';
import { createActivities } from '../../activities';
import type { AgentInput, AgentResult } from '../../common/agents';
import { parseConfig } from '../../platform/config';
import { workflowIdFor } from '../../common/thread';
import { startDevServer } from '../../launch/dev-server';
import { ensureTemporalCli } from '../../launch/temporal-cli';
import { createKeelWorker } from '../../worker/create-worker';
import { TestConversation } from '../helpers/conversation';
import { testDataConverter, testEncryptionKeys } from '../helpers/encryption';
import { inMemoryTracing } from '../helpers/tracing';

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
    // On a worker that traces, so the histories carry spans' headers; the replay test replays them
    // on one that does not (decision 0290).
    tracing: inMemoryTracing(),
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
  const record = async (name: string, workflowId: string, runId?: string): Promise<void> => {
    // The CLI writes the canonical proto JSON that historyFromJSON reads back.
    const args = ['workflow', 'show', '--address', server.address, '-w', workflowId];
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
  /** Events of a closed workflow by type, from the server's history (npm run record-histories shows them). */
  const eventTypes = async (workflowId: string): Promise<string> => {
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const counts = new Map<string, number>();
    for (const event of history.events ?? []) {
      const type = temporal.api.enums.v1.EventType[event.eventType ?? 0] ?? String(event.eventType);
      const name = type.replace('EVENT_TYPE_', '').toLowerCase();
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    return [...counts].map(([type, count]) => `${count} ${type}`).join(', ');
  };
  const chosen = process.argv.slice(2);
  const wanted = (name: string): boolean => chosen.length === 0 || chosen.includes(name);
  try {
    if (wanted('plain-turn')) {
      const plain = await TestConversation.start(client, config);
      await plain.ask('hello');
      await record('plain-turn', plain.handle.workflowId);
    }

    if (wanted('parallel-tools')) {
      const parallel = await TestConversation.start(client, config);
      await parallel.ask('run: echo alpha\nrun: echo beta\nread: missing.txt');
      await record('parallel-tools', parallel.handle.workflowId);
    }

    if (wanted('crash-recovered-turn')) {
      const crashed = await TestConversation.start(client, config);
      hangTools = true;
      await crashed.ask('run: echo interrupted', {});
      hangTools = false;
      await crashed.ask('and after that?');
      await record('crash-recovered-turn', crashed.handle.workflowId);
    }

    if (wanted('waited-turn')) {
      // As `runs/wait` sends it: the model calls are local activities (decision 0200).
      const waited = await TestConversation.start(client, config);
      await waited.ask('hello', { deltas: false });
      await waited.ask('run: echo waited', { deltas: false });
      await record('waited-turn', waited.handle.workflowId);
    }

    if (wanted('continue-as-new')) {
      const long = await TestConversation.start(client, config);
      const firstRunId = (await long.handle.describe()).runId;
      for (let turn = 1; ; turn++) {
        await long.ask(`run: echo turn ${turn}`);
        if ((await long.handle.describe()).runId !== firstRunId) break;
      }
      await record('continue-as-new', long.handle.workflowId, firstRunId);
    }

    if (wanted('agent-parent') || wanted('task-conversation')) {
      // A workflow that starts an agent (agentWorkflow, which Keel's Nexus operation starts),
      // from earlier messages, and the agent's task conversation with a tool call in between.
      const input: AgentInput = {
        messages: [
          { role: 'user', content: 'What is in the workspace?' },
          { role: 'assistant', content: 'Nothing yet.' },
          { role: 'user', content: 'run: echo recorded' },
        ],
        config: { model: 'scripted:demo' },
      };
      // The replay test runs each history under its file's name as workflow id, and the agent's
      // thread id derives from its parent's id: the parent's id is its file's name.
      const parentId = 'agent-parent';
      const result = await client.workflow.execute<(input: AgentInput) => Promise<AgentResult>>(
        'agentWorkflow',
        {
          workflowId: parentId,
          taskQueue: config.taskQueue,
          args: [input],
        },
      );
      if (result.status !== 'completed') throw new Error(`the recorded agent ended ${result.status}`);
      const agentId = workflowIdFor(result.thread_id);
      if (wanted('agent-parent')) await record('agent-parent', parentId);
      if (wanted('task-conversation')) await record('task-conversation', agentId);
      process.stderr.write(`  agent-parent: ${await eventTypes(parentId)}\n`);
      process.stderr.write(`  task-conversation: ${await eventTypes(agentId)}\n`);
    }
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
