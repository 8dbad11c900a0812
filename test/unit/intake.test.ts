/**
 * The intake's timing rules (decision 0012), on a client whose only part intake uses — running a
 * call under an abort signal — is Temporal's own `withAbortSignal` contract.
 */
import type { Client } from '@temporalio/client';
import { WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { deliver, FleetActivity, isStall } from '../../api/gateway/intake';

const client = {
  withAbortSignal: <T>(_signal: AbortSignal, fn: () => Promise<T>) => fn(),
} as unknown as Client;

const timings = { signalAfterMs: 50, answerWithinMs: 200 };
const settleAfter = <T>(ms: number, outcome: () => T): Promise<Awaited<T>> =>
  new Promise((resolve, reject) =>
    setTimeout(() => {
      try {
        resolve(outcome() as Awaited<T>);
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    }, ms),
  );
const refusal = () => {
  throw ApplicationFailure.create({ type: 'ApprovalNotPending', message: 'not pending', nonRetryable: true });
};
const stall = () => {
  throw new WorkflowUpdateRPCTimeoutOrCancelledError('timed out', { cause: new Error('deadline') });
};

describe('durable intake', () => {
  it.each([
    [
      'the thread answers at once',
      () => settleAfter(10, () => 'run'),
      { kind: 'taken', value: 'run' },
      false,
    ],
    [
      'the thread answers after the signal went too',
      () => settleAfter(120, () => 'run'),
      { kind: 'taken', value: 'run' },
      true,
    ],
    ['no worker answers at all', () => new Promise<string>(() => undefined), { kind: 'queued' }, true],
    ['the update stalls at once', () => settleAfter(5, stall), { kind: 'queued' }, true],
  ])('%s', async (_name, byUpdate, expected, signalled) => {
    let signals = 0;
    const delivery = await deliver({
      client,
      timings,
      byUpdate,
      bySignal: () => {
        signals++;
        return Promise.resolve();
      },
    });
    expect(delivery).toEqual(expected);
    expect(signals).toBe(signalled ? 1 : 0);
  });

  it.each([
    { title: 'passes on a refusal the thread gives at once, sending no signal', afterMs: 10, sent: 0 },
    {
      title: 'passes on a refusal the thread gives late, after the signal went, instead of answering queued',
      afterMs: 120,
      sent: 1,
    },
  ])('$title', async ({ afterMs, sent }) => {
    let signals = 0;
    await expect(
      deliver({
        client,
        timings,
        byUpdate: () => settleAfter(afterMs, refusal),
        bySignal: () => Promise.resolve(void signals++),
      }),
    ).rejects.toMatchObject({ type: 'ApprovalNotPending' });
    expect(signals).toBe(sent);
  });

  it('reads an update the server refused because no worker took it in as a stall, not a refusal', () => {
    const unprocessed = ApplicationFailure.create({
      type: 'UnprocessedUpdate',
      message: "Workflow Update is rejected because it wasn't processed by worker.",
      nonRetryable: true,
    });
    expect(isStall(new WorkflowUpdateFailedError('Workflow Update failed', unprocessed))).toBe(true);
    const refused = ApplicationFailure.create({ type: 'RunNotFound', message: 'no run', nonRetryable: true });
    expect(isStall(new WorkflowUpdateFailedError('Workflow Update failed', refused))).toBe(false);
  });

  describe('a waiting input queued behind a busy fleet (decision 0300)', () => {
    it.each([
      ['another thread accepted an input a moment ago', 500, 0, 1_000, 1_500],
      ['no thread accepted one for longer than the window', 2_500, 0, 1_000, 0],
      ['the input has been held as long as it may be', 500, 0, 10_000, 0],
      ['the hold ends before the window does', 100, 0, 9_000, 1_000],
    ])('%s', (_name, acceptedAgoMs, since, nowMs, holdMs) => {
      let now = nowMs - acceptedAgoMs;
      const fleet = new FleetActivity(2_000, 10_000, () => now);
      fleet.accepted();
      now = nowMs;
      expect(fleet.holdFor(since)).toBe(holdMs);
    });

    it('holds nothing before any thread accepted an input', () => {
      expect(new FleetActivity().holdFor(Date.now())).toBe(0);
    });

    const deliverBehind = async (othersAccepting: boolean) => {
      const fleet = new FleetActivity(100, 10_000);
      fleet.accepted();
      // Other threads keep accepting inputs while this one waits in the queue.
      const others = othersAccepting ? setInterval(() => fleet.accepted(), 20) : undefined;
      const since = Date.now();
      let signals = 0;
      let asked = 0;
      try {
        const delivery = await deliver({
          client,
          timings,
          byUpdate: () => settleAfter(400, () => 'run'),
          bySignal: () => Promise.resolve(void signals++),
          holdSignal: () => {
            const held = fleet.holdFor(since);
            if (held > 0) return Promise.resolve(held);
            asked++;
            return Promise.resolve(0); // the thread's task is not held by a worker
          },
        });
        return { delivery, signals, asked };
      } finally {
        clearInterval(others);
      }
    };

    it("sends no signal while other threads accept inputs, and takes the thread's own answer", async () => {
      expect(await deliverBehind(true)).toEqual({
        delivery: { kind: 'taken', value: 'run' },
        signals: 0,
        asked: 0,
      });
    });

    it('asks the thread and sends the signal once no other thread accepts', async () => {
      const { signals, asked } = await deliverBehind(false);
      expect(signals).toBe(1);
      expect(asked).toBe(1);
    });
  });
});
