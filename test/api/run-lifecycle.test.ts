/**
 * Run lifecycle over HTTP with the Anthropic provider (real SDK, fake Messages API): webhooks
 * for deferred and finished runs, signed and retried; cancel reaching the model's HTTP request.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { Run } from '../../common/run';
import { fakeAnthropicApi, retriedMidway } from '../helpers/anthropic';
import { apiHarness, call, createThread, userInput, waitRun } from '../helpers/api';
import { deltaText, durable, readSse } from '../helpers/sse';
import { eventually } from '../helpers/temporal';

jest.setTimeout(120_000);

const secret = `whsec_${Buffer.from('keel-test-webhook-secret-0123456').toString('base64')}`;

interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

/** A webhook receiver that fails the first `failFirst` attempts of each webhook-id with 500. */
async function startReceiver(
  failFirst: number,
): Promise<{ url: string; deliveries: Delivery[]; close(): Promise<void> }> {
  const deliveries: Delivery[] = [];
  const attempts = new Map<string, number>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const id = String(request.headers['webhook-id']);
      const attempt = (attempts.get(id) ?? 0) + 1;
      attempts.set(id, attempt);
      const status = attempt <= failFirst ? 500 : 204;
      deliveries.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), status });
      response.statusCode = status;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    deliveries,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('run lifecycle with the Anthropic provider', () => {
  const anthropic = fakeAnthropicApi();
  const harness = apiHarness(() => ({
    ...anthropic.env(),
    KEEL_WEBHOOK_SECRET: secret,
    // The receivers listen on loopback, which webhooks reach only when the operator allows it.
    KEEL_WEBHOOK_ALLOW_HOSTS: '127.0.0.1',
  }));
  let base: string;
  beforeAll(() => {
    base = harness.base;
  });

  const newThread = () => createThread(base, 'l');

  afterEach(() => expect(anthropic.server.violations).toEqual([]));

  it('marks a run deferred when the wait gives up, completes it anyway, and posts signed webhooks for both, retried past failures', async () => {
    const receiver = await startReceiver(2);
    try {
      anthropic.server.enqueue({
        kind: 'message',
        content: [{ type: 'text', text: 'a slow but complete answer' }],
        firstTokenDelayMs: 3_000,
      });
      const threadId = await newThread();
      const waited = await waitRun<Run>(
        base,
        threadId,
        userInput('take your time', { webhook: receiver.url }),
        'timeout_s=1',
      );
      expect(waited.status).toBe(202);
      expect(waited.body.status).toBe('deferred');
      const runId = waited.body.run_id;
      const finished = await eventually(async () => {
        const run = (await call<Run>(base, 'GET', `/threads/${threadId}/runs/${runId}`)).body;
        return run.status === 'completed' ? run : undefined;
      }, 30_000);
      expect(finished.output).toBe('a slow but complete answer');
      // Each webhook: two 500s, then accepted on the third attempt, with one webhook-id throughout.
      const accepted = await eventually(
        () => {
          const ok = receiver.deliveries.filter((delivery) => delivery.status === 204);
          return Promise.resolve(ok.length >= 2 ? ok : undefined);
        },
        60_000,
        'both webhooks',
      );
      const verifier = new Webhook(secret);
      const payloads = accepted.map((delivery) => {
        const headers = Object.fromEntries(
          ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [
            name,
            String(delivery.headers[name]),
          ]),
        );
        return verifier.verify(delivery.body, headers) as {
          type: string;
          data: { run: Run; output?: string };
        };
      });
      expect(payloads.map((payload) => payload.type).sort()).toEqual(['run.completed', 'run.deferred']);
      const completed = payloads.find((payload) => payload.type === 'run.completed')!;
      expect(completed.data.run).toMatchObject({ run_id: runId, status: 'completed' });
      expect(completed.data.output).toBe('a slow but complete answer');
      for (const delivery of accepted) {
        const id = delivery.headers['webhook-id'];
        const tries = receiver.deliveries.filter((other) => other.headers['webhook-id'] === id);
        expect(tries.map((other) => other.status)).toEqual([500, 500, 204]);
      }
    } finally {
      await receiver.close();
    }
  });

  it('posts a webhook when a run fails and when it is cancelled', async () => {
    const receiver = await startReceiver(0);
    try {
      anthropic.server.enqueue({
        kind: 'error',
        status: 400,
        type: 'invalid_request_error',
        message: 'nope',
      });
      const threadId = await newThread();
      const failed = await call<Run>(
        base,
        'POST',
        `/threads/${threadId}/runs`,
        userInput('fail', { webhook: receiver.url }),
      );
      anthropic.server.enqueue({ kind: 'hang' });
      const hanging = await call<Run>(
        base,
        'POST',
        `/threads/${threadId}/runs`,
        userInput('hang', { webhook: receiver.url }),
      );
      await eventually(async () => {
        const run = (await call<Run>(base, 'GET', `/threads/${threadId}/runs/${hanging.body.run_id}`)).body;
        return run.status === 'running' ? run : undefined;
      });
      await call(base, 'POST', `/threads/${threadId}/runs/${hanging.body.run_id}/cancel`, {});
      const types = await eventually(() => {
        const seen = receiver.deliveries.map(
          (delivery) => (JSON.parse(delivery.body) as { type: string }).type,
        );
        return Promise.resolve(seen.length >= 2 ? seen : undefined);
      }, 30_000);
      expect(types.sort()).toEqual(['run.cancelled', 'run.failed']);
      expect(failed.body.run_id).not.toBe(hanging.body.run_id);
    } finally {
      await receiver.close();
    }
  });

  it('cancels a run mid model call: the HTTP request to the model is aborted and the transcript stays valid', async () => {
    anthropic.server.enqueue({ kind: 'hang' });
    const threadId = await newThread();
    const before = anthropic.server.requests.length;
    const created = await call<Run>(base, 'POST', `/threads/${threadId}/runs`, userInput('think hard'));
    await anthropic.server.waitForRequests(before + 1, 20_000);
    const request = anthropic.server.requests[before]!;
    expect(request.closedAt).toBeUndefined();
    const cancelled = await call<Run>(
      base,
      'POST',
      `/threads/${threadId}/runs/${created.body.run_id}/cancel`,
      {},
    );
    expect(cancelled.body.status).toBe('cancelled');
    // The activity learns of the cancel by heartbeat (about a second) and aborts its fetch.
    await eventually(
      () => Promise.resolve(request.closedAt !== undefined ? true : undefined),
      20_000,
      'the model request to close',
    );
    const again = await call<Run>(
      base,
      'POST',
      `/threads/${threadId}/runs/${created.body.run_id}/cancel`,
      {},
    );
    expect(again.body.status).toBe('cancelled');
    const next = await call(base, 'POST', `/threads/${threadId}/runs/wait`, userInput('still there?'));
    expect(next.status).toBe(200);
  });

  it('tags token deltas with the attempt, so a client drops the partial text of a failed attempt', async () => {
    anthropic.server.enqueue(...retriedMidway);
    const threadId = await newThread();
    const stream = await readSse(`${base}/threads/${threadId}/runs/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(userInput('retry me', { stream_mode: 'keel' })),
    });
    const deltas = durable(stream.events).filter((event) => event.event === 'message.delta');
    expect(new Set(deltas.map((event) => event.data.attempt))).toEqual(new Set([1, 2]));
    expect(
      deltas
        .filter((event) => event.data.attempt === 1)
        .map((event) => event.data.text)
        .join(''),
    ).toBe('lost words that ');
    expect(deltaText(stream.events)).toBe('the answer that counts');
    expect(stream.events.at(-1)!.event).toBe('end');
  });

  it('makes exactly one model request for a run created together with its thread', async () => {
    const before = anthropic.server.requests.length;
    const threadId = `l-${randomUUID()}`;
    const waited = await waitRun(base, threadId, userInput('hi', { if_not_exists: 'create' }));
    expect(waited.status).toBe(200);
    expect(anthropic.server.requests.length - before).toBe(1);
  });
});
