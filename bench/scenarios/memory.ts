/**
 * 5. Memory: a fresh worker process, then N conversations that each take one turn and go idle,
 * every one kept in the worker's workflow cache. The worker's RSS growth divided by N is what an
 * idle cached conversation costs. It is read twice: after a 5 s settle, which counts the garbage
 * the workflow threads' heaps have not collected yet (V8 lets an old generation grow well past
 * what it keeps before marking it), and after the worker's heap probe (worker/heap-probe.ts) has
 * collected every heap, main thread and workflow threads, which is what the conversations hold.
 * The probe also reports the heaps' use, so a retention shows beside the RSS (decision 0281).
 */
import { randomUUID } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HeapReport } from '../../worker/heap-probe';
import type { System } from '../harness';
import { processStats } from '../harness';
import { progress } from '../progress';
import type { ScenarioResult } from '../report';
import { showSpread, spread } from '../stats';
import { expectCompleted, turn } from '../turns';

export interface MemoryOptions {
  conversations: number;
  trials: number;
  /** Conversations started at once. */
  parallel: number;
}

async function settledRss(pid: number): Promise<number> {
  // Let the worker's garbage collector and the runtime's buffers settle before reading.
  await sleep(5_000);
  return (await processStats(pid))?.rssBytes ?? Number.NaN;
}

interface Reading {
  /** RSS after the settle, garbage and all. */
  settledRss: number;
  /** RSS once every heap's garbage is collected. */
  collectedRss: number;
  /** The heaps' use after collection, all threads. */
  heapUsed: number;
  /** Each thread's heap in use after collection, MiB. */
  threads: Record<string, number>;
}

/** Has the worker's probe collect every heap; its report, and the RSS after. */
async function collectedReading(pid: number, reportPath: string): Promise<Omit<Reading, 'settledRss'>> {
  await rm(reportPath, { force: true });
  process.kill(pid, 'SIGUSR2');
  const deadline = Date.now() + 300_000;
  for (;;) {
    const report = await readFile(reportPath, 'utf8').then(
      (text) => JSON.parse(text) as HeapReport,
      () => undefined,
    );
    if (report !== undefined) {
      // Let the freed pages go back to the system before reading.
      await sleep(1_000);
      return {
        collectedRss: (await processStats(pid))?.rssBytes ?? Number.NaN,
        heapUsed: report.heaps.reduce((sum, heap) => sum + heap.usedBytes, 0),
        threads: Object.fromEntries(report.heaps.map((heap) => [heap.thread, heap.usedBytes / 2 ** 20])),
      };
    }
    if (Date.now() > deadline) throw new Error('the worker wrote no heap report within 300 s');
    await sleep(250);
  }
}

async function reading(pid: number, reportPath: string): Promise<Reading> {
  const settled = await settledRss(pid);
  return { settledRss: settled, ...(await collectedReading(pid, reportPath)) };
}

export async function memory(system: System, options: MemoryOptions): Promise<ScenarioResult> {
  const perConversation: number[] = [];
  const perConversationSettled: number[] = [];
  const heapPerConversation: number[] = [];
  const baselines: number[] = [];
  const finals: number[] = [];
  const threadHeaps: { before: Record<string, number>; after: Record<string, number> }[] = [];
  const reportPath = path.join(system.dir, 'heap-report.json');
  for (let trial = 0; trial < options.trials; trial++) {
    // A fresh worker each trial, warmed with a few conversations so its one-time costs are paid.
    system.worker.kill('SIGTERM');
    await system.worker.exited;
    const worker = await system.startWorker({ KEEL_HEAP_REPORT: reportPath });
    for (let index = 0; index < 10; index++) {
      expectCompleted(await turn(system.apiUrl, `bench-warm-${randomUUID()}`, 'hello'), 'warm-up turn');
    }
    const before = await reading(worker.pid, reportPath);
    let done = 0;
    const queue = Array.from({ length: options.conversations }, () => `bench-idle-${randomUUID()}`);
    await Promise.all(
      Array.from({ length: options.parallel }, async () => {
        for (let thread = queue.pop(); thread !== undefined; thread = queue.pop()) {
          expectCompleted(await turn(system.apiUrl, thread, 'hello'), 'idle conversation turn');
          progress.count('idle conversations', ++done, options.conversations);
        }
      }),
    );
    const after = await reading(worker.pid, reportPath);
    const perIdle = (bytes: number): number => bytes / options.conversations / 1024;
    baselines.push(before.collectedRss / 2 ** 20);
    finals.push(after.collectedRss / 2 ** 20);
    perConversation.push(perIdle(after.collectedRss - before.collectedRss));
    perConversationSettled.push(perIdle(after.settledRss - before.settledRss));
    heapPerConversation.push(perIdle(after.heapUsed - before.heapUsed));
    threadHeaps.push({ before: before.threads, after: after.threads });
  }
  const kib = spread(perConversation);
  return {
    rows: [
      {
        scenario: '5 memory',
        metric: `worker RSS per idle cached conversation, KiB`,
        value: showSpread(kib, 0),
        note: `${options.conversations} conversations, read after a full GC of every heap; target < 512 KiB`,
      },
      {
        scenario: '',
        metric: '  of it V8 heap in use (all threads), KiB',
        value: showSpread(spread(heapPerConversation), 0),
      },
      {
        scenario: '',
        metric: '  RSS after a 5 s settle, no GC, KiB',
        value: showSpread(spread(perConversationSettled), 0),
        note: 'counts garbage not yet collected',
      },
      {
        scenario: '',
        metric: '  worker RSS before → after (collected), MiB',
        value: `${showSpread(spread(baselines), 0)} → ${showSpread(spread(finals), 0)}`,
      },
    ],
    data: {
      per_conversation_kib: kib,
      heap_per_conversation_kib: spread(heapPerConversation),
      settled_per_conversation_kib: spread(perConversationSettled),
      rss_before_mib: spread(baselines),
      rss_after_mib: spread(finals),
      heap_by_thread_mib: threadHeaps,
      ...options,
    },
  };
}
