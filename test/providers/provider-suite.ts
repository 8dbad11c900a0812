/**
 * The tests every provider must pass, run against each provider's fake: how a dropped
 * connection, a stream that goes silent and a cancelled call end. Each provider's file calls it
 * inside its own `describe`, after the `beforeEach` that starts its fake and client.
 */
import type { ModelClient, ModelRequest } from '../../activities/model/client';
import { failureOf } from './provider-helpers';

/** The faults every fake injects the same way. */
type Fault = { kind: 'reset' } | { kind: 'hang' } | { kind: 'stall'; afterDeltas: number };

export interface ProviderUnderTest {
  fake: { enqueue(...replies: Fault[]): void; waitForRequests(count: number): Promise<void> };
  model: ModelClient;
  request(overrides?: Partial<ModelRequest>): ModelRequest;
}

export function itBehavesLikeAProvider(
  current: () => ProviderUnderTest,
  options: { silentFromTheStart: boolean } = { silentFromTheStart: true },
): void {
  it('retries a connection reset', async () => {
    const { fake, model, request } = current();
    fake.enqueue({ kind: 'reset' });
    expect(await failureOf(model.complete(request()))).toMatchObject({
      type: 'ModelConnectionError',
      nonRetryable: false,
    });
  });

  const silences: Array<[string, Fault]> = [
    ['goes silent midway', { kind: 'stall', afterDeltas: 1 }],
    ...(options.silentFromTheStart ? [['never answers', { kind: 'hang' }] as [string, Fault]] : []),
  ];
  it.each(silences)('abandons a stream that %s and retries it', async (_, reply) => {
    const { fake, model, request } = current();
    fake.enqueue(reply);
    expect(await failureOf(model.complete(request()))).toMatchObject({
      type: 'ModelStreamStalled',
      nonRetryable: false,
    });
  });

  it('aborts the HTTP request when the call is cancelled', async () => {
    const { fake, model, request } = current();
    fake.enqueue({ kind: 'hang' });
    const controller = new AbortController();
    const pending = model.complete(request({ signal: controller.signal }));
    await fake.waitForRequests(1);
    const reason = new Error('cancelled by Temporal');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
  });
}
