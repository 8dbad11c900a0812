/**
 * 5. Memory: a fresh worker process, then N conversations that each take one turn and go idle,
 * every one kept in the worker's workflow cache. The worker's RSS growth divided by N is what an
 * idle cached conversation costs.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
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

export async function memory(system: System, options: MemoryOptions): Promise<ScenarioResult> {
  const perConversation: number[] = [];
  const baselines: number[] = [];
  const finals: number[] = [];
  for (let trial = 0; trial < options.trials; trial++) {
    // A fresh worker each trial, warmed with a few conversations so its one-time costs are paid.
    system.worker.kill('SIGTERM');
    await system.worker.exited;
    const worker = await system.startWorker();
    for (let index = 0; index < 10; index++) {
      expectCompleted(await turn(system.apiUrl, `bench-warm-${randomUUID()}`, 'hello'), 'warm-up turn');
    }
    const before = await settledRss(worker.pid);
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
    const after = await settledRss(worker.pid);
    baselines.push(before / 2 ** 20);
    finals.push(after / 2 ** 20);
    perConversation.push((after - before) / options.conversations / 1024);
  }
  const kib = spread(perConversation);
  return {
    rows: [
      {
        scenario: '5 memory',
        metric: `worker RSS per idle cached conversation, KiB`,
        value: showSpread(kib, 0),
        note: `${options.conversations} conversations; target < 1024 KiB`,
      },
      {
        scenario: '',
        metric: '  worker RSS before → after, MiB',
        value: `${showSpread(spread(baselines), 0)} → ${showSpread(spread(finals), 0)}`,
      },
    ],
    data: {
      per_conversation_kib: kib,
      rss_before_mib: spread(baselines),
      rss_after_mib: spread(finals),
      ...options,
    },
  };
}
