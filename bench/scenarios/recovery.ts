/**
 * 4. Recovery: the worker is SIGKILLed while a model call is in flight (the fake Anthropic
 * server holds the request open), a new worker process starts at once, as a deployment would
 * start a replacement pod, and the clock runs until the run completes. The retried model call
 * answers at once, so the figure is what durability adds: the heartbeat timeout that notices the
 * dead worker, the retry, and the new worker's start.
 */
import { randomUUID } from 'node:crypto';
import type { FakeAnthropic } from '../../test/fakes/anthropic-server';
import type { System } from '../harness';
import { progress } from '../progress';
import type { ScenarioResult } from '../report';
import { showSpread, spread } from '../stats';
import { expectCompleted, outcomeOf, turn } from '../turns';

/** The model call's heartbeat timeout (workflows/interpreter/activity-options.ts). */
const heartbeatTimeoutS = 10;

export async function recovery(
  system: System,
  fake: FakeAnthropic,
  options: { trials: number },
): Promise<ScenarioResult> {
  fake.setResponder(() => ({ kind: 'message', content: [{ type: 'text', text: 'recovered' }] }));
  const total: number[] = [];
  const workerStart: number[] = [];
  const retryArrived: number[] = [];
  for (let trial = 0; trial < options.trials; trial++) {
    const thread = `bench-recovery-${randomUUID()}`;
    const before = fake.requests.length;
    fake.enqueue({ kind: 'hang' });
    const answer = fetch(`${system.apiUrl}/threads/${thread}/runs/wait?timeout_s=120`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        if_not_exists: 'create',
        config: { model: 'anthropic:claude-sonnet-4-5' },
        input: { messages: [{ role: 'user', content: 'hello' }] },
      }),
    });
    await fake.waitForRequests(before + 1, 30_000);
    // Let the call settle into its heartbeats, as a real call would be mid-answer.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const killedAt = performance.now();
    system.worker.kill('SIGKILL');
    await system.worker.exited;
    await system.startWorker();
    workerStart.push((performance.now() - killedAt) / 1000);
    await fake.waitForRequests(before + 2, 60_000);
    retryArrived.push((performance.now() - killedAt) / 1000);
    const response = await answer;
    total.push((performance.now() - killedAt) / 1000);
    const outcome = outcomeOf(response.status, await response.text());
    if (outcome !== 'completed') throw new Error(`recovered run: the run ended ${outcome}`);
    progress.count('kills', trial + 1, options.trials);
  }
  // A turn on the new worker, to prove the system is whole again.
  expectCompleted(
    await turn(system.apiUrl, `bench-after-recovery-${randomUUID()}`, 'hello'),
    'turn after recovery',
  );
  const recovered = spread(total);
  return {
    rows: [
      {
        scenario: '4 recovery',
        metric: 'SIGKILL mid-model-call → run completed, s',
        value: showSpread(recovered),
        note: `target ≤ ${heartbeatTimeoutS + 2} s (heartbeat timeout ${heartbeatTimeoutS} s + 2 s)`,
      },
      { scenario: '', metric: '  of which: new worker ready, s', value: showSpread(spread(workerStart)) },
      {
        scenario: '',
        metric: '  of which: retried call reaches the model, s',
        value: showSpread(spread(retryArrived)),
      },
    ],
    data: {
      seconds: recovered,
      worker_ready_s: spread(workerStart),
      retry_arrived_s: spread(retryArrived),
      trials: total,
      heartbeat_timeout_s: heartbeatTimeoutS,
    },
  };
}
