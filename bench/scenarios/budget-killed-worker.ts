/**
 * The budget case of a worker SIGKILLed mid-call (issue 37, decision 0425): a thread with a tight
 * `max_cost_usd` asks for a long, slowly streamed answer; once the call's heartbeat has reached
 * Temporal and the answer has streamed a while, the worker process is killed with SIGKILL and a
 * new one started. Temporal retries the call on the new worker after its heartbeat timeout. What
 * the fake billed (the lost attempt's partial answer, and whatever the retry is let spend) is
 * measured by the caller, as for the other cases (bench/scenarios/budget-ceiling.ts).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FakeAnthropic, FakeRequest, Responder } from '../../test/fakes/anthropic-server';
import type { System } from '../harness';

const model = 'anthropic:claude-sonnet-4-5';
/** How long the answer streams before its worker is killed. */
const streamedBeforeKillMs = 2_000;
const asked = 'hello under a ceiling';

const lastUserText = (body: FakeRequest): string => JSON.stringify(body.messages.at(-1)?.content ?? '');

async function request(base: string, method: 'GET' | 'POST', route: string, body?: unknown): Promise<string> {
  const response = await fetch(`${base}${route}`, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (response.status >= 400)
    throw new Error(`${method} ${route}: HTTP ${response.status} ${text.slice(0, 200)}`);
  return text;
}

/** Waits until the workflow's pending model call has a heartbeat recorded (its reservation). */
async function heartbeatRecorded(system: System, workflowId: string): Promise<void> {
  const handle = system.client.workflow.getHandle(workflowId);
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(200)) {
    const { raw } = await handle.describe();
    const beat = (raw.pendingActivities ?? []).some(
      (pending) =>
        pending.activityType?.name === 'callModel' && (pending.heartbeatDetails?.payloads?.length ?? 0) > 0,
    );
    if (beat) return;
  }
  throw new Error('no heartbeat of callModel reached Temporal');
}

/**
 * One run under `ceilingUsd` whose worker is SIGKILLed mid-answer; resolves when the run ends.
 * The model answers this question, asked again by the retry, at the same length each time, as a
 * real model would; other requests get `otherwise`'s answers, as before and after.
 */
export async function workerKilledMidCall(
  system: System,
  fake: FakeAnthropic,
  ceilingUsd: number,
  otherwise: Responder,
): Promise<string> {
  const threadId = `bench-budget-killed-${randomUUID()}`;
  await request(system.apiUrl, 'POST', '/threads', {
    thread_id: threadId,
    config: { model, max_cost_usd: ceilingUsd },
  });
  const requests = fake.requests.length;
  // Longer than the ceiling allows, a token every 20 ms: the kill lands mid-stream.
  fake.setResponder((body, index) =>
    lastUserText(body).includes(asked)
      ? {
          kind: 'message',
          content: [{ type: 'text', text: 'a slow answer that is billed as it goes '.repeat(150) }],
          tokenDelayMs: 20,
        }
      : otherwise(body, index),
  );
  const run = JSON.parse(
    await request(system.apiUrl, 'POST', `/threads/${threadId}/runs`, {
      input: { messages: [{ role: 'user', content: asked }] },
    }),
  ) as { run_id: string };
  await fake.waitForRequests(requests + 1, 60_000);
  await heartbeatRecorded(system, `conversation-${threadId}`);
  await sleep(streamedBeforeKillMs);
  system.worker.kill('SIGKILL');
  await system.startWorker();
  try {
    return await request(system.apiUrl, 'GET', `/threads/${threadId}/runs/${run.run_id}/join`);
  } finally {
    fake.setResponder(otherwise);
  }
}
