/**
 * A thread's `network_hosts` from the API to the worker's proxy: the operator's list bounds
 * what a thread may ask for (422 otherwise, nothing created), an assistant carries the setting
 * like any other, and a command of the thread reaches its host while another thread's cannot.
 * Issue 29's attack, end to end: under the operator's wildcard a sandboxed command tries every
 * textual form of loopback through the proxy, by CONNECT and by absolute-URI GET, against a
 * local listener (a stand-in for the API or the Temporal UI) and never reaches it.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LangChainMessage, ToolMessage } from '../../api/protocol/langchain-messages';
import { call, processApiHarness, userInput, waitRun } from '../helpers/api';
import { expectProbeRefused, proxyProbeCommand } from '../helpers/proxy-probe';

jest.setTimeout(120_000);

let port = 0;
const server = http.createServer((_request, response) => response.end('answer-from-the-allowed-host'));
/** The local service a sandbox must never reach: on `::`, so IPv4 and IPv6 loopback alike. */
let secretPort = 0;
const secret = http.createServer((_request, response) => response.end('secret-of-the-local-service'));
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => secret.listen(0, '::', resolve));
  secretPort = (secret.address() as AddressInfo).port;
});
afterAll(() => {
  server.close();
  secret.close();
});

/** The output of one `curl` the scripted model runs in the thread. */
async function curl(base: string, threadId: string): Promise<ToolMessage> {
  const response = await waitRun<{ messages: LangChainMessage[] }>(
    base,
    threadId,
    userInput(`run: curl -sS --max-time 10 http://localhost:${port}/`),
  );
  expect(response.status).toBe(200);
  const result = response.body.messages
    .filter((message): message is ToolMessage => message.type === 'tool')
    .at(-1);
  expect(result).toBeDefined();
  return result!;
}

describe('network hosts through the API', () => {
  const harness = processApiHarness(() => ({
    KEEL_MODEL: 'scripted:demo',
    // The operator's wildcard covers the secret's port: only the canonical check stands between.
    KEEL_SANDBOX_NETWORK_HOSTS: `localhost:${port},*.example.org,*:${secretPort}`,
  }));

  it('refuses a host the operator does not allow, and creates nothing', async () => {
    const threadId = `net-refused-${randomUUID()}`;
    const refused = await call(harness.base, 'POST', '/threads', {
      thread_id: threadId,
      config: { network_hosts: ['pypi.org'] },
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      error: { code: 'network_host_not_allowed', param: 'config.network_hosts' },
    });
    expect((await call(harness.base, 'GET', `/threads/${threadId}`)).status).toBe(404);
    const malformed = await call(harness.base, 'POST', '/threads', {
      config: { network_hosts: ['http://example.org/path'] },
    });
    expect(malformed.status).toBe(422);
  });

  it("lets a thread's commands reach its host, and no other thread's", async () => {
    const allowed = `net-allowed-${randomUUID()}`;
    const created = await call(harness.base, 'POST', '/threads', {
      thread_id: allowed,
      config: { network_hosts: [`localhost:${port}`] },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ config: { network_hosts: [`localhost:${port}`] } });
    const reached = await curl(harness.base, allowed);
    expect(reached.content).toBe('answer-from-the-allowed-host');

    const plain = `net-plain-${randomUUID()}`;
    expect((await call(harness.base, 'POST', '/threads', { thread_id: plain })).status).toBe(200);
    const offline = await curl(harness.base, plain);
    expect(offline.status).toBe('error');
    expect(offline.content).not.toContain('answer-from-the-allowed-host');
  });

  it('takes the hosts from an assistant, checked the same way', async () => {
    const refused = await call(harness.base, 'POST', '/assistants', {
      graph_id: 'agent',
      config: { configurable: { network_hosts: ['pypi.org'] } },
    });
    const assistant = await call<{ assistant_id: string }>(harness.base, 'POST', '/assistants', {
      graph_id: 'agent',
      config: { configurable: { network_hosts: [`localhost:${port}`] } },
    });
    expect(assistant.status).toBe(200);
    const threadId = `net-assistant-${randomUUID()}`;
    const answered = await call<{ messages: LangChainMessage[] }>(
      harness.base,
      'POST',
      `/threads/${threadId}/runs/wait`,
      {
        ...userInput(`run: curl -sS --max-time 10 http://localhost:${port}/`),
        assistant_id: assistant.body.assistant_id,
        if_not_exists: 'create',
      },
    );
    expect(answered.status).toBe(200);
    const result = answered.body.messages
      .filter((message): message is ToolMessage => message.type === 'tool')
      .at(-1);
    expect(result?.content).toBe('answer-from-the-allowed-host');
    // An assistant asking for more than the operator allows is refused when it is created.
    expect(refused.status).toBe(422);
  });

  it("refuses a thread naming loopback, a private or a metadata host under the operator's wildcard", async () => {
    for (const host of [
      `localhost:${secretPort}`,
      `LOCALHOST:${secretPort}`,
      `127.0.0.1:${secretPort}`,
      `[0::ffff:7f00:1]:${secretPort}`,
      `2130706433:${secretPort}`,
      `0x7f.1:${secretPort}`,
      `127.1:${secretPort}`,
      `[::1]:${secretPort}`,
      `169.254.169.254:${secretPort}`,
      `[fd00:ec2::254]:${secretPort}`,
      `10.0.0.1:${secretPort}`,
      `100.64.0.1:${secretPort}`,
      // The operator named localhost on one port: not on another.
      `localhost:${secretPort === port + 1 ? port + 2 : port + 1}`,
    ]) {
      const refused = await call(harness.base, 'POST', '/threads', { config: { network_hosts: [host] } });
      expect({ host, status: refused.status }).toEqual({ host, status: 422 });
      expect(refused.body).toMatchObject({ error: { code: 'network_host_not_allowed' } });
      expect(JSON.stringify(refused.body)).toContain('only an operator entry naming it exactly');
    }
  });

  it('never lets a sandboxed command reach a loopback listener in any form of its address', async () => {
    const threadId = `net-canon-${randomUUID()}`;
    const created = await call(harness.base, 'POST', '/threads', {
      thread_id: threadId,
      config: { network_hosts: [`*:${secretPort}`, `localhost:${port}`] },
    });
    expect(created.status).toBe(200);
    const command = proxyProbeCommand(secretPort, port);
    const response = await waitRun<{ messages: LangChainMessage[] }>(
      harness.base,
      threadId,
      userInput(`run: ${command}`),
    );
    expect(response.status).toBe(200);
    const output = String(
      response.body.messages.filter((message): message is ToolMessage => message.type === 'tool').at(-1)
        ?.content,
    );
    expectProbeRefused(output, port);
  });
});
