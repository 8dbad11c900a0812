/**
 * The soak, as a function: conversations chat through the real API (the front door, where a
 * refusal would reach a user) on real `keel worker` processes while workers are disrupted —
 * SIGKILLed at random every 2–6 s, or restarted one after another as a rolling deploy does. The
 * summary says what was refused and why, and what was lost, doubled or orphaned.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import pino from 'pino';
import { startApi } from '../../api/server';
import { parseConfig } from '../../platform/config';
import { startFakeAnthropic } from '../fakes/anthropic-server';
import { call } from '../helpers/api';
import { TestConversation, toolResults } from '../helpers/conversation';
import { WorkerFleet, type WorkerProcess } from '../helpers/worker-process';
import { IntakeLedger, awaitRunEnd, latencySummary, submitUntilAccepted } from './api-chat';
import { anthropicModel, anyToolResponder, lines, userTexts, workerEnv, workspaceOf } from './chaos-helpers';

export type Disruption = 'kill' | 'rolling';

export interface SoakOptions {
  client: Client;
  seconds: number;
  conversations: number;
  workers: number;
  disruption: Disruption;
  /** Progress lines (a soak runs for minutes). */
  log?: (line: string) => void;
}

export interface SoakSummary {
  seconds: number;
  disruption: Disruption;
  conversations: number;
  workers: number;
  turns: number;
  disruptions: number;
  turns_completed: number;
  turns_failed: number;
  refused: number;
  refusal_reasons: Record<string, number>;
  unavailable_reads: Record<string, number>;
  intake_latency: ReturnType<typeof latencySummary>;
  lost_messages: number;
  duplicate_executions: number;
  orphaned_tool_use: number;
  interrupted_tool_results: number;
  failures: string[];
  /** Where the event histories of threads that failed a turn or could not be read were written. */
  histories_dir?: string;
}

/** Zero refused, lost, doubled, orphaned or failed: what every soak must end with. */
export const soakClean = (summary: SoakSummary): boolean =>
  summary.refused +
    summary.lost_messages +
    summary.duplicate_executions +
    summary.orphaned_tool_use +
    summary.turns_failed ===
  0;

export async function runSoak(options: SoakOptions): Promise<SoakSummary> {
  const log = options.log ?? (() => undefined);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'keel-soak-'));
  const config = parseConfig(
    {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      KEEL_DATA_DIR: dataDir,
      KEEL_TASK_QUEUE: `soak-${randomUUID()}`,
      KEEL_LOG_LEVEL: 'warn',
    },
    process.cwd(),
  );
  const fake = await startFakeAnthropic({ responder: anyToolResponder });
  const fleet = new WorkerFleet(() => workerEnv(config, fake, { KEEL_SHUTDOWN_GRACE: '10' }));
  const api = await startApi({
    client: options.client,
    config,
    // Errors only: a 500 in a soak is a bug to read about, not a number.
    logger: pino({ level: 'error' }, pino.destination(2)),
    host: '127.0.0.1',
    port: 0,
  });
  const workers: WorkerProcess[] = await Promise.all(
    Array.from({ length: options.workers }, () => fleet.start()),
  );
  const deadline = Date.now() + options.seconds * 1000;
  const ledger = new IntakeLedger();
  let disruptions = 0;
  // A kill every 2–6 s after the last replacement is ready (as `npm run chaos` always ran), or a
  // rolling deploy: each worker in turn drains (SIGTERM) and is replaced.
  const disrupt = async (index: number): Promise<void> => {
    await workers[index]!.stop(options.disruption === 'kill' ? 'SIGKILL' : 'SIGTERM');
    disruptions++;
    workers[index] = await fleet.start();
  };
  const disrupter = (async () => {
    while (Date.now() < deadline) {
      if (options.disruption === 'kill') {
        await sleep(2_000 + Math.random() * 4_000);
        if (Date.now() < deadline) await disrupt(Math.floor(Math.random() * workers.length));
      } else {
        for (let index = 0; index < workers.length && Date.now() < deadline; index++) {
          await disrupt(index);
          await sleep(2_000);
        }
      }
    }
  })();
  const progress = setInterval(
    () =>
      log(
        `soak: ${Math.max(0, Math.round((deadline - Date.now()) / 1000))} s left, ${completed} turns done, ${disruptions} ${options.disruption === 'kill' ? 'kills' : 'restarts'}, ${ledger.refused} refused`,
      ),
    15_000,
  );
  let turns = 0;
  let completed = 0;
  const failures: string[] = [];
  const threads = Array.from({ length: options.conversations }, () => `soak-${randomUUID()}`);
  const sent = new Map<string, string[]>();
  await Promise.all(
    threads.map(async (threadId) => {
      sent.set(threadId, []);
      const created = await call(api.url, 'POST', '/threads', {
        thread_id: threadId,
        config: anthropicModel,
      });
      if (created.status !== 200)
        throw new Error(`could not create ${threadId}: ${JSON.stringify(created.body)}`);
      for (let turn = 1; Date.now() < deadline; turn++) {
        const text = `run: echo ${threadId}-${turn} >> marker\nrun: echo read ${turn}`;
        turns++;
        sent.get(threadId)!.push(text);
        try {
          const run = await submitUntilAccepted(api.url, threadId, text, ledger, {
            runId: `turn-${turn}`,
            deadline: deadline + 120_000,
          });
          const done = await awaitRunEnd(api.url, threadId, run.run_id, ledger, deadline + 240_000);
          if (done.status === 'completed') completed++;
          else failures.push(`${threadId} turn ${turn}: ${done.status} ${done.error?.message ?? ''}`);
        } catch (error) {
          failures.push(`${threadId} turn ${turn}: ${(error as Error).message}`);
        }
      }
    }),
  );
  await disrupter;
  clearInterval(progress);
  let duplicates = 0;
  let lost = 0;
  let orphaned = 0;
  let interrupted = 0;
  const suspects = new Set(threads.filter((threadId) => failures.some((line) => line.startsWith(threadId))));
  for (const threadId of threads) {
    const transcript = await TestConversation.attach(options.client, threadId)
      .transcript()
      .catch(() => {
        orphaned++;
        suspects.add(threadId);
        return [];
      });
    const texts = userTexts(transcript);
    for (const text of sent.get(threadId)!) if (!texts.includes(text)) lost++;
    duplicates += texts.length - new Set(texts).size;
    const marker = await lines(path.join(workspaceOf(config, threadId), 'marker'));
    duplicates += marker.length - new Set(marker).size;
    interrupted += toolResults(transcript).filter((result) => /interrupted/.test(result.content)).length;
  }
  orphaned += fake.violations.length;
  // A post-mortem for whoever reads the summary: every run of each suspect thread's workflow.
  for (const threadId of suspects) await writeHistories(options.client, dataDir, threadId, log);
  await api.stop();
  await fleet.stopAll();
  await fake.close();
  return {
    seconds: options.seconds,
    disruption: options.disruption,
    conversations: options.conversations,
    workers: options.workers,
    turns,
    disruptions,
    turns_completed: completed,
    turns_failed: failures.length,
    refused: ledger.refused,
    refusal_reasons: Object.fromEntries(ledger.refusals),
    unavailable_reads: Object.fromEntries(ledger.unavailableReads),
    intake_latency: latencySummary(ledger.latencies),
    lost_messages: lost,
    duplicate_executions: duplicates,
    orphaned_tool_use: orphaned,
    interrupted_tool_results: interrupted,
    failures: failures.slice(0, 10),
    ...(suspects.size === 0 ? {} : { histories_dir: dataDir }),
  };
}

async function writeHistories(
  client: Client,
  directory: string,
  threadId: string,
  log: (line: string) => void,
): Promise<void> {
  try {
    for await (const execution of client.workflow.list({
      query: `WorkflowId = '${TestConversation.attach(client, threadId).handle.workflowId}'`,
    })) {
      const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
      const file = path.join(directory, `history-${threadId}-${execution.runId}.json`);
      await writeFile(file, JSON.stringify(history, null, 1));
      log(`soak: wrote ${file} (${execution.status.name})`);
    }
  } catch (error) {
    log(`soak: could not fetch the history of ${threadId}: ${(error as Error).message}`);
  }
}
