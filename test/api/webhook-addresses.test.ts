/**
 * Webhook URLs never lead Keel to loopback, private, link-local or metadata addresses: refused
 * with 422 when the run is created (nothing is submitted), and refused again by the activity at
 * delivery time, where redirects are never followed.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MockActivityEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { createSendWebhook } from '../../activities/send-webhook';
import type { SendWebhookInput } from '../../common/activities';
import { apiHarness, call, userInput } from '../helpers/api';

describe('webhook addresses at run creation', () => {
  const harness = apiHarness();

  it.each([
    ['loopback', 'http://127.0.0.1:8080/hook'],
    ['loopback by name', 'http://localhost:8080/hook'],
    ['loopback, IPv6', 'http://[::1]:8080/hook'],
    ['loopback, as a decimal number', 'http://2130706433/hook'],
    ['loopback, IPv4-mapped IPv6', 'http://[::ffff:127.0.0.1]/hook'],
    ['private 10/8', 'http://10.0.0.7/hook'],
    ['private 172.16/12', 'http://172.20.1.1/hook'],
    ['private 192.168/16', 'https://192.168.1.10/hook'],
    ['private IPv6 (unique local)', 'http://[fd00::5]/hook'],
    ['link-local', 'http://169.254.10.10/hook'],
    ['link-local IPv6', 'http://[fe80::1]/hook'],
    ['cloud metadata', 'http://169.254.169.254/latest/meta-data/'],
    ['cloud metadata by name', 'http://metadata.google.internal/computeMetadata/v1/'],
    ['unspecified', 'http://0.0.0.0:8080/hook'],
  ])('refuses a %s webhook with 422 and submits nothing', async (_class, webhook) => {
    const threadId = `w-${randomUUID()}`;
    expect((await call(harness.base, 'POST', '/threads', { thread_id: threadId })).status).toBe(200);
    for (const route of ['runs', 'runs/wait', 'runs/stream']) {
      const response = await call<{ error: { code: string; param?: string; message: string } }>(
        harness.base,
        'POST',
        `/threads/${threadId}/${route}`,
        userInput('hi', { webhook }),
      );
      expect(response.status).toBe(422);
      expect(response.body.error).toMatchObject({ code: 'webhook_refused', param: 'webhook' });
      expect(response.body.error.message).toMatch(/KEEL_WEBHOOK_ALLOW_HOSTS/);
    }
    expect((await call<unknown[]>(harness.base, 'GET', `/threads/${threadId}/runs`)).body).toEqual([]);
  });
});

describe('webhook addresses at delivery', () => {
  let server: Server;
  let requests: string[];
  let port: number;

  beforeAll(async () => {
    requests = [];
    server = createServer((request, response) => {
      requests.push(request.url ?? '');
      if (request.url === '/redirect') {
        response.writeHead(302, { location: `http://127.0.0.1:${port}/internal` });
        response.end();
        return;
      }
      response.writeHead(204).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    requests = [];
  });

  const delivery = (path: string): SendWebhookInput => ({
    url: `http://127.0.0.1:${port}${path}`,
    webhook_id: `msg_${randomUUID()}`,
    timestamp: Math.floor(Date.now() / 1000),
    payload: { type: 'run.completed', timestamp: new Date().toISOString(), data: {} },
  });

  it('refuses a loopback URL that was not allowlisted, without retrying and without sending', async () => {
    const send = createSendWebhook({ secret: undefined, allowHosts: [] });
    const error: unknown = await new MockActivityEnvironment()
      .run(send, delivery('/hook'))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApplicationFailure);
    expect(error).toMatchObject({ type: 'WebhookRefused', nonRetryable: true });
    expect((error as Error).message).toMatch(/a loopback address/);
    expect(requests).toEqual([]);
  });

  it('delivers to an allowlisted host, and never follows its redirects', async () => {
    const send = createSendWebhook({ secret: undefined, allowHosts: ['127.0.0.1'] });
    await new MockActivityEnvironment().run(send, delivery('/hook'));
    const error: unknown = await new MockActivityEnvironment()
      .run(send, delivery('/redirect'))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ type: 'WebhookDeliveryFailed' });
    expect((error as Error).message).toMatch(/answered 302 \(redirects are not followed\)/);
    expect(requests).toEqual(['/hook', '/redirect']);
  });
});
