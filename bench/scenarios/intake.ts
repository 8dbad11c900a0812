/**
 * 7. Intake: how long `POST /threads/:id/runs` takes to answer on the normal path, while the
 * worker is SIGKILLed every 2–6 s (and replaced, as a deployment would), and with no worker at
 * all — where the message goes into history by signal (decision 0012). Every message sent must
 * be accepted and, once a worker is back, complete: a refusal fails the scenario.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { System } from '../harness';
import { progress } from '../progress';
import type { ScenarioResult } from '../report';
import { percentile } from '../stats';
import { outcomeOf } from '../turns';

interface Sent {
  thread: string;
  runId: string;
  ms: number;
}

async function send(system: System, thread: string): Promise<Sent> {
  const runId = randomUUID();
  const started = performance.now();
  const response = await fetch(`${system.apiUrl}/threads/${thread}/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ run_id: runId, input: { messages: [{ role: 'user', content: 'hello' }] } }),
  });
  const ms = performance.now() - started;
  if (response.status !== 200)
    throw new Error(`intake refused: HTTP ${response.status} ${await response.text()}`);
  return { thread, runId, ms };
}

/** Joins every run until it has ended; all must complete. */
async function allCompleted(system: System, sent: Sent[]): Promise<void> {
  for (const { thread, runId } of sent) {
    for (;;) {
      const response = await fetch(`${system.apiUrl}/threads/${thread}/runs/${runId}/join?timeout_s=60`);
      if (response.status === 200) {
        const outcome = outcomeOf(200, await response.text());
        if (outcome !== 'completed') throw new Error(`run ${runId} ended ${outcome}`);
        break;
      }
      await response.text();
      await sleep(500);
    }
  }
}

const figures = (sent: Sent[]) => ({
  n: sent.length,
  p50_ms: percentile(
    sent.map((s) => s.ms),
    0.5,
  ),
  p95_ms: percentile(
    sent.map((s) => s.ms),
    0.95,
  ),
  max_ms: Math.max(...sent.map((s) => s.ms)),
});

export async function intake(
  system: System,
  options: { messages: number; killSeconds: number },
): Promise<ScenarioResult> {
  const threads = Array.from({ length: 5 }, () => `bench-intake-${randomUUID()}`);
  for (const thread of threads) {
    const created = await fetch(`${system.apiUrl}/threads`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ thread_id: thread }),
    });
    if (created.status !== 200) throw new Error(`thread not created: HTTP ${created.status}`);
  }
  const pick = (index: number) => threads[index % threads.length]!;

  progress.note('normal path');
  const normal: Sent[] = [];
  for (let index = 0; index < options.messages; index++) {
    normal.push(await send(system, pick(index)));
    progress.count('messages', index + 1, options.messages);
  }
  await allCompleted(system, normal);

  progress.note(`worker SIGKILLed every 2–6 s for ${options.killSeconds} s`);
  const duringKills: Sent[] = [];
  const deadline = Date.now() + options.killSeconds * 1000;
  let kills = 0;
  const killer = (async () => {
    while (Date.now() < deadline) {
      await sleep(2_000 + Math.random() * 4_000);
      system.worker.kill('SIGKILL');
      await system.worker.exited;
      kills++;
      await system.startWorker();
    }
  })();
  for (let index = 0; Date.now() < deadline; index++) {
    duringKills.push(await send(system, pick(index)));
    await sleep(100);
  }
  await killer;
  await allCompleted(system, duringKills);

  progress.note('no worker at all');
  system.worker.kill('SIGKILL');
  await system.worker.exited;
  const noWorker: Sent[] = [];
  for (let index = 0; index < options.messages; index++) noWorker.push(await send(system, pick(index)));
  await system.startWorker();
  await allCompleted(system, noWorker);

  const show = (sent: Sent[]) => {
    const f = figures(sent);
    return `p50 ${f.p50_ms.toFixed(0)}, p95 ${f.p95_ms.toFixed(0)} (n ${f.n})`;
  };
  return {
    rows: [
      { scenario: '7 intake', metric: 'POST runs, normal path, ms', value: show(normal) },
      { scenario: '', metric: `  during ${kills} SIGKILLs, ms`, value: show(duringKills), note: '0 refused' },
      {
        scenario: '',
        metric: '  with no worker, ms',
        value: show(noWorker),
        note: 'taken by signal; all completed once a worker was back',
      },
    ],
    data: {
      normal: figures(normal),
      during_kills: { ...figures(duringKills), kills },
      no_worker: figures(noWorker),
    },
  };
}
