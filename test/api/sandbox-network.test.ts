/**
 * A thread's `network_hosts` from the API to the worker's proxy: the operator's list bounds
 * what a thread may ask for (422 otherwise, nothing created), an assistant carries the setting
 * like any other, and a command of the thread reaches its host while another thread's cannot.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LangChainMessage, ToolMessage } from '../../api/protocol/langchain-messages';
import { call, processApiHarness, userInput } from '../helpers/api';

jest.setTimeout(120_000);

let port = 0;
const server = http.createServer((_request, response) => response.end('answer-from-the-allowed-host'));
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => server.close());

/** The output of one `curl` the scripted model runs in the thread. */
async function curl(base: string, threadId: string): Promise<ToolMessage> {
  const response = await call<{ messages: LangChainMessage[] }>(
    base,
    'POST',
    `/threads/${threadId}/runs/wait`,
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
    KEEL_SANDBOX_NETWORK_HOSTS: `localhost:${port},*.example.org`,
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
});
