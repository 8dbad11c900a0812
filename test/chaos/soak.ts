/**
 * `npm run chaos`: a soak. Starts its own Temporal dev server and fake Anthropic, runs many
 * conversations through real `keel worker` processes while one of them is SIGKILLed at random
 * every few seconds, then prints a summary. Exit code 1 when anything was lost, duplicated or
 * orphaned. Tunables: SOAK_SECONDS (default 120), SOAK_CONVERSATIONS (8), SOAK_WORKERS (2).
 */
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { parseConfig } from '../../common/config';
import { startDevServer } from '../../cli/dev-server';
import { ensureTemporalCli } from '../../cli/temporal-cli';
import { buildWorkflowBundle } from '../../worker/bundle';
import { writeFile } from 'node:fs/promises';
import { startFakeAnthropic } from '../fakes/anthropic-server';
import { TestConversation, toolResults } from '../helpers/conversation';
import type { WorkerProcess } from '../helpers/worker-process';
import {
  anthropicModel,
  anyToolResponder,
  lines,
  userTexts,
  WorkerFleet,
  workerEnv,
  workspaceOf,
} from './chaos-helpers';

const seconds = Number(process.env.SOAK_SECONDS ?? 120);
const conversationCount = Number(process.env.SOAK_CONVERSATIONS ?? 8);
const workerCount = Number(process.env.SOAK_WORKERS ?? 2);

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'keel-soak-'));
  const config = parseConfig(
    { PATH: process.env.PATH, HOME: process.env.HOME, KEEL_DATA_DIR: dataDir, KEEL_TASK_QUEUE: 'soak' },
    process.cwd(),
  );
  const cliPath = await ensureTemporalCli(config, (line) => process.stderr.write(`${line}\n`));
  const port = 19_233 + Math.floor(Math.random() * 1000);
  const [server, bundle] = await Promise.all([
    startDevServer({ cliPath, dataDir, port, uiPort: port + 1000, namespace: 'default' }),
    buildWorkflowBundle(),
  ]);
  const bundlePath = path.join(dataDir, 'bundle.js');
  await writeFile(bundlePath, bundle);
  process.env.KEEL_TEST_TEMPORAL_ADDRESS = server.address;
  process.env.KEEL_TEST_BUNDLE = bundlePath;
  const fake = await startFakeAnthropic({ responder: anyToolResponder });
  const fleet = new WorkerFleet(() => workerEnv(config, fake));
  const client = new Client({ connection: await Connection.connect({ address: server.address }) });
  const workers: WorkerProcess[] = await Promise.all(
    Array.from({ length: workerCount }, () => fleet.start()),
  );
  const deadline = Date.now() + seconds * 1000;
  let kills = 0;
  const killer = (async () => {
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 2_000 + Math.random() * 4_000));
      const index = Math.floor(Math.random() * workers.length);
      workers[index]!.kill('SIGKILL');
      await workers[index]!.exited;
      kills++;
      workers[index] = await fleet.start();
    }
  })();
  let turns = 0;
  let completed = 0;
  const failures: string[] = [];
  const conversations = await Promise.all(
    Array.from({ length: conversationCount }, () => TestConversation.start(client, config, anthropicModel)),
  );
  const sent = new Map<TestConversation, string[]>();
  await Promise.all(
    conversations.map(async (conversation) => {
      sent.set(conversation, []);
      for (let turn = 1; Date.now() < deadline; turn++) {
        const text = `run: echo ${conversation.threadId}-${turn} >> marker\nrun: echo read ${turn}`;
        turns++;
        sent.get(conversation)!.push(text);
        try {
          const run = await conversation.submit(text);
          const done = await conversation.finished(run.run_id, 180_000);
          if (done.status === 'completed') completed++;
          else
            failures.push(
              `${conversation.threadId} turn ${turn}: ${done.status} ${done.error?.message ?? ''}`,
            );
        } catch (error) {
          failures.push(`${conversation.threadId} turn ${turn}: ${(error as Error).message}`);
        }
      }
    }),
  );
  await killer;
  let duplicates = 0;
  let lost = 0;
  let orphaned = 0;
  let interrupted = 0;
  for (const conversation of conversations) {
    const transcript = await conversation.transcript().catch(() => {
      orphaned++;
      return [];
    });
    const texts = userTexts(transcript);
    for (const text of sent.get(conversation)!) if (!texts.includes(text)) lost++;
    duplicates += texts.length - new Set(texts).size;
    const marker = await lines(path.join(workspaceOf(config, conversation.threadId), 'marker'));
    duplicates += marker.length - new Set(marker).size;
    interrupted += toolResults(transcript).filter((result) => /interrupted/.test(result.content)).length;
  }
  orphaned += fake.violations.length;
  const summary = {
    seconds,
    conversations: conversationCount,
    workers: workerCount,
    turns,
    kills,
    turns_completed: completed,
    turns_failed: failures.length,
    duplicate_executions: duplicates,
    orphaned_tool_use: orphaned,
    lost_messages: lost,
    interrupted_tool_results: interrupted,
  };
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  for (const failure of failures.slice(0, 10)) process.stdout.write(`  ${failure}\n`);
  await fleet.stopAll();
  await fake.close();
  await client.connection.close();
  await server.stop();
  process.exit(duplicates + orphaned + lost + failures.length > 0 ? 1 : 0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
