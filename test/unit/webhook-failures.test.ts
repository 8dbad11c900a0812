/**
 * A failed webhook says where it went (without the secrets a receiver URL may carry) and why it
 * failed — the status, or the network error — in the failure and in the worker's log.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { createSendWebhook } from '../../activities/send-webhook';
import { createLogger } from '../../launch/env';
import { innermostMessage, urlForLogs } from '../../common/urls';

const delivery = (url: string) => ({
  url,
  webhook_id: 'msg_run-1_completed',
  timestamp: 1_700_000_000,
  payload: { type: 'run.completed', timestamp: '2026-01-01T00:00:00Z', data: {} },
});

async function listen(status: number): Promise<{ server: Server; port: number }> {
  const server = createServer((_request, response) => response.writeHead(status).end('no'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

describe('webhook failures', () => {
  // The receivers here listen on loopback, which only an allowlist lets a webhook reach. The
  // activity logs through its context, so it runs in the SDK's mock activity environment.
  const sendWebhook = createSendWebhook({ secret: undefined, allowHosts: ['127.0.0.1'] });
  const send = (input: Parameters<typeof sendWebhook>[0]) =>
    new MockActivityEnvironment().run(sendWebhook, input);

  it('name the receiver without credentials or query, and the status it answered', async () => {
    const { server, port } = await listen(503);
    try {
      const failed = await send(delivery(`http://127.0.0.1:${port}/hooks/keel?token=s3cret#x`)).catch(
        (error: unknown) => error,
      );
      expect(failed).toBeInstanceOf(ApplicationFailure);
      expect((failed as ApplicationFailure).type).toBe('WebhookDeliveryFailed');
      expect((failed as ApplicationFailure).message).toBe(
        `webhook http://127.0.0.1:${port}/hooks/keel answered 503 Service Unavailable`,
      );
    } finally {
      server.close();
    }
  });

  it('name the network error when nothing answers', async () => {
    const { server, port } = await listen(200);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const failed = (await send(delivery(`http://127.0.0.1:${port}/hook?token=s3cret`)).catch(
      (error: unknown) => error,
    )) as ApplicationFailure;
    expect(failed.message).toBe(
      `webhook http://127.0.0.1:${port}/hook unreachable: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });

  it('never repeat the credentials of a URL fetch refuses', async () => {
    const failed = (await send(delivery('http://user:pw@127.0.0.1:9/hook?token=s3cret')).catch(
      (error: unknown) => error,
    )) as ApplicationFailure;
    expect(failed.message).toMatch(/^webhook http:\/\/127\.0\.0\.1:9\/hook unreachable: /);
    expect(failed.message).not.toMatch(/pw|s3cret/);
  });

  it.each([
    ['https://example.com/hook', 'https://example.com/hook'],
    ['https://example.com/hook?token=abc&x=1', 'https://example.com/hook'],
    ['https://user:secret@example.com:8443/a/b#frag', 'https://example.com:8443/a/b'],
    ['http://example.com?only=query', 'http://example.com'],
  ])('show %s in logs as %s', (url, shown) => {
    expect(urlForLogs(url)).toBe(shown);
  });

  it('reach the log as their message and cause, never as {"cause": {}}', () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(chunk.toString());
        callback();
      },
    });
    const logger = createLogger({ log: { level: 'info', format: 'json' } }, 'worker', destination);
    const cause = new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:9') });
    const error = ApplicationFailure.create({
      type: 'WebhookDeliveryFailed',
      message: 'webhook failed',
      cause,
    });
    logger.warn({ error }, 'Activity failed');
    const logged = JSON.parse(lines[0]!) as { error: { message: string; type: string } };
    expect(logged.error.message).toContain('webhook failed');
    expect(JSON.stringify(logged)).toContain('fetch failed');
    expect(JSON.stringify(logged)).not.toContain('"cause":{}');
    expect(innermostMessage(error)).toBe('connect ECONNREFUSED 127.0.0.1:9');
  });
});
