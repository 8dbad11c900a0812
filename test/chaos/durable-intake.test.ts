/**
 * Durable intake with every worker down: messages to new and existing threads, an approval
 * decision and a cancel are each accepted at once (the run exists as `queued`, with its id), and
 * once a worker is back all of them are processed, in order, nothing twice.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Run } from '../../common/run';
import { call, userInput } from '../helpers/api';
import { TestConversation } from '../helpers/conversation';
import { eventually } from '../helpers/temporal';
import { setTimeout as sleep } from 'node:timers/promises';
import { durable, readSse } from '../helpers/sse';
import { IntakeLedger, awaitRunEnd } from './api-chat';
import { lines, userTexts, workersDownHarness, workspaceOf } from './chaos-helpers';
import { compareStreamPositions, parseStreamId } from '../../common/stream-ids';

jest.setTimeout(180_000);

describe('intake while every worker is down', () => {
  const harness = workersDownHarness();
  const startWorker = () => harness.fleet.start();

  /** Sends a request and says how long the API took to answer it. */
  const timed = async <T>(send: () => Promise<T>): Promise<{ value: T; ms: number }> => {
    const started = Date.now();
    const value = await send();
    return { value, ms: Date.now() - started };
  };

  it('accepts messages, a decision and a cancel within a second, then processes them in order once', async () => {
    const base = harness.api.url;
    const suffix = randomUUID().slice(0, 8);
    const [gated, idle, busy, fresh] = [
      `gated-${suffix}`,
      `idle-${suffix}`,
      `busy-${suffix}`,
      `fresh-${suffix}`,
    ];
    const first = await startWorker();

    // Before the outage: a run waiting for approval, an idle thread, a run in a long model call.
    await call(base, 'POST', '/threads', { thread_id: gated, config: { approval: 'require' } });
    const gatedRun = await call<Run>(
      base,
      'POST',
      `/threads/${gated}/runs`,
      userInput('run: echo ran >> marker'),
    );
    const approval = await eventually(async () => {
      const pending = await call<{ approval_id: string }[]>(base, 'GET', `/threads/${gated}/approvals`);
      return pending.body[0];
    });
    await call(base, 'POST', '/threads', { thread_id: idle });
    await call(base, 'POST', `/threads/${idle}/runs/wait`, userInput('before the outage'));
    await call(base, 'POST', '/threads', { thread_id: busy });
    const busyRun = await call<Run>(base, 'POST', `/threads/${busy}/runs`, userInput('think: 120'));
    await eventually(async () => {
      const run = await call<Run>(base, 'GET', `/threads/${busy}/runs/${busyRun.body.run_id}`);
      return run.body.status === 'running' ? true : undefined;
    });

    await first.stop('SIGKILL');

    // Every worker is down. Each of these is taken durably, well under a second.
    const answers = [
      await timed(() =>
        call<Run>(base, 'POST', `/threads/${idle}/runs`, userInput('first', { run_id: 'one' })),
      ),
      await timed(() =>
        call<Run>(base, 'POST', `/threads/${idle}/runs`, userInput('second', { run_id: 'two' })),
      ),
      // A client retrying the same request gets the same run.
      await timed(() =>
        call<Run>(base, 'POST', `/threads/${idle}/runs`, userInput('first', { run_id: 'one' })),
      ),
      await timed(() =>
        call<Run>(
          base,
          'POST',
          `/threads/${fresh}/runs`,
          userInput('a new thread', { if_not_exists: 'create' }),
        ),
      ),
    ];
    for (const { value, ms } of answers) {
      expect(value.status).toBe(200);
      expect(value.body.status).toBe('queued');
      expect(ms).toBeLessThan(1_000);
    }
    expect(answers.map(({ value }) => value.body.run_id).slice(0, 3)).toEqual(['one', 'two', 'one']);
    const keyed = await Promise.all(
      [1, 2].map(() =>
        call<Run>(base, 'POST', `/threads/${idle}/runs`, userInput('third'), {
          'idempotency-key': `key-${suffix}`,
        }),
      ),
    );
    expect(keyed.map((response) => response.status)).toEqual([200, 200]);
    expect(keyed[0]!.body.run_id).toBe(keyed[1]!.body.run_id);

    // What only the thread can decide (busy under `reject`) is decided there: a failed run, kept.
    const rejected = await call<Run>(
      base,
      'POST',
      `/threads/${busy}/runs`,
      userInput('not now', { multitask_strategy: 'reject', run_id: 'refused' }),
    );
    expect(rejected.status).toBe(200);
    expect(rejected.body.status).toBe('queued');

    const decided = await timed(() =>
      call(base, 'POST', `/threads/${gated}/approvals/${approval.approval_id}`, { decision: 'approve' }),
    );
    expect(decided.value.status).toBe(202);
    expect(decided.value.body).toMatchObject({ approval_id: approval.approval_id, status: 'queued' });
    expect(decided.ms).toBeLessThan(1_000);
    const cancelled = await timed(() =>
      call(base, 'POST', `/threads/${busy}/runs/${busyRun.body.run_id}/cancel`, {}),
    );
    expect(cancelled.value.status).toBe(202);
    expect(cancelled.ms).toBeLessThan(1_000);

    // Reads answer in bounded time: 503 with Retry-After, never a hang.
    const read = await timed(() => call(base, 'GET', `/threads/${idle}/runs/one`));
    expect(read.value.status).toBe(503);
    expect(read.value.headers.get('retry-after')).not.toBeNull();
    expect(read.value.body).toMatchObject({ error: { code: 'thread_unavailable' } });
    expect(read.ms).toBeLessThan(5_000);

    await startWorker();
    const ledger = new IntakeLedger();
    const deadline = Date.now() + 120_000;
    const ended = async (threadId: string, runId: string) =>
      awaitRunEnd(base, threadId, runId, ledger, deadline);
    expect((await ended(idle, 'one')).status).toBe('completed');
    expect((await ended(idle, 'two')).status).toBe('completed');
    expect((await ended(idle, keyed[0]!.body.run_id)).status).toBe('completed');
    expect((await ended(fresh, answers[3]!.value.body.run_id)).status).toBe('completed');
    expect((await ended(gated, gatedRun.body.run_id)).status).toBe('completed');
    expect((await ended(busy, busyRun.body.run_id)).status).toBe('cancelled');
    expect(await ended(busy, 'refused')).toMatchObject({
      status: 'failed',
      status_reason: 'thread_busy',
      error: { type: 'ThreadBusy' },
      refused_input: 'not now',
    });

    const idleTranscript = await TestConversation.attach(harness.client, idle).transcript();
    expect(userTexts(idleTranscript)).toEqual(['before the outage', 'first', 'second', 'third']);
    expect(await lines(path.join(workspaceOf(harness.config, gated), 'marker'))).toEqual(['ran']);
  });

  it('keeps open streams through the outage and resumes them, gap-free, once a worker is back', async () => {
    const base = harness.api.url;
    const suffix = randomUUID().slice(0, 8);
    const [open, opened] = [`open-${suffix}`, `opened-${suffix}`];
    const worker = await startWorker();
    // A slow typist: its answer streams for seconds, so the kill lands mid-answer.
    const run = await call<Run>(
      base,
      'POST',
      `/threads/${open}/runs`,
      userInput(`say ${'word '.repeat(150)}`, {
        if_not_exists: 'create',
        config: { model: 'scripted:typewriter' },
      }),
    );
    await eventually(async () => {
      const current = await call<Run>(base, 'GET', `/threads/${open}/runs/${run.body.run_id}`);
      return current.body.status === 'running' ? true : undefined;
    }, 60_000);
    // Killed once the stream is open and the run is mid-answer (its first delta arrived).
    let midAnswer: () => void = () => undefined;
    const answering = new Promise<void>((resolve) => (midAnswer = resolve));
    // Keel's native events (stream_mode=keel): the deltas, `run.completed`, heartbeats and `end`.
    const following = readSse(
      `${base}/threads/${open}/runs/${run.body.run_id}/stream?stream_mode=keel`,
      {},
      (event) => {
        if (event.event === 'message.delta') midAnswer();
        return false;
      },
    );
    await Promise.race([
      answering,
      following.then((stream) => {
        throw new Error(`the stream ended before the answer began: ${JSON.stringify(stream)}`);
      }),
    ]);
    await worker.stop('SIGKILL');

    // With no worker, a new run's stream opens at once and waits.
    const started = Date.now();
    const streaming = readSse(`${base}/threads/${opened}/runs/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(
        userInput('streamed through the outage', { if_not_exists: 'create', stream_mode: 'keel' }),
      ),
    });
    await sleep(6_000);
    await startWorker();

    for (const stream of [await following, await streaming]) {
      expect(stream.status).toBe(200);
      const events = durable(stream.events);
      // Ids as sent: a log offset, or with a live piece's attempt and characters (decision 0340).
      const ids = events.map((event) => event.eventId!);
      expect(new Set(ids).size).toBe(ids.length);
      const positions = ids.map((id) => parseStreamId(id)!);
      for (const [index, position] of positions.entries())
        if (index > 0) expect(compareStreamPositions(positions[index - 1]!, position)).toBeLessThan(0);
      expect(events.at(-1)?.event).toBe('run.completed');
      expect(stream.events.at(-1)?.event).toBe('end');
    }
    // The outage lasted seconds; the streams said they were alive meanwhile.
    expect((await following).events.some((event) => event.event === 'heartbeat')).toBe(true);
    expect(Date.now() - started).toBeGreaterThan(6_000);
  });
});
