/**
 * The intake's timing rules (decision 0012), on a client whose only part intake uses — running a
 * call under an abort signal — is Temporal's own `withAbortSignal` contract.
 */
import type { Client } from '@temporalio/client';
import { WorkflowUpdateFailedError, WorkflowUpdateRPCTimeoutOrCancelledError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { deliver, isStall } from '../../api/intake';

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

  it('passes on a refusal the thread gives at once, sending no signal', async () => {
    let signals = 0;
    await expect(
      deliver({
        client,
        timings,
        byUpdate: () => settleAfter(10, refusal),
        bySignal: () => Promise.resolve(void signals++),
      }),
    ).rejects.toMatchObject({ type: 'ApprovalNotPending' });
    expect(signals).toBe(0);
  });

  it('passes on a refusal the thread gives late, after the signal went, instead of answering queued', async () => {
    let signals = 0;
    await expect(
      deliver({
        client,
        timings,
        byUpdate: () => settleAfter(120, refusal),
        bySignal: () => Promise.resolve(void signals++),
      }),
    ).rejects.toMatchObject({ type: 'ApprovalNotPending' });
    expect(signals).toBe(1);
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
});
