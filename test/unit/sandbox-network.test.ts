/**
 * A thread's network hosts: its commands, in a sandbox with no network of its own, reach those
 * hosts through Keel's proxy and nothing else — not another port, not loopback through a
 * wildcard, not around the proxy. Real bubblewrap, real curl, a real local HTTP server.
 */
import { mkdtemp } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../platform/config';
import { bashTool } from '../../activities/tools/bash';
import type { ToolContext } from '../../activities/tools/registry';
import { Sandbox } from '../../activities/tools/sandbox';
import { workspaceFor } from '../../activities/tools/workspace';

jest.setTimeout(60_000);

async function contextFor(operatorHosts: string, asked: string[]): Promise<ToolContext> {
  const dataDir = await mkdtemp(path.join(process.env.KEEL_TEST_DIR ?? os.tmpdir(), 'sandbox-net-'));
  const config = parseConfig({ PATH: process.env.PATH, KEEL_SANDBOX_NETWORK_HOSTS: operatorHosts }, '/');
  const sandbox = new Sandbox(config.sandbox, config.childEnvironment.PATH);
  return {
    threadId: 'thread-net',
    workspace: await workspaceFor(dataDir, 'thread-net'),
    signal: new AbortController().signal,
    idempotencyKey: 'thread-net:tool-1',
    environment: config.childEnvironment,
    sandbox,
    networkHosts: sandbox.grant(asked),
  };
}

const run = (context: ToolContext, command: string) => bashTool.run({ command }, context);

describe("a thread's network hosts, through Keel's proxy", () => {
  const servers: http.Server[] = [];
  let allowed: number;
  let other: number;

  const serve = async (body: string): Promise<number> => {
    const server = http.createServer((_request, response) => response.end(body));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  };

  beforeAll(async () => {
    allowed = await serve('hello-from-the-allowed-host');
    other = await serve('secret-of-another-service');
  });
  afterAll(() => servers.forEach((server) => server.close()));

  it('reaches an allowed host by plain HTTP and through a CONNECT tunnel', async () => {
    const context = await contextFor(`localhost:${allowed}`, [`localhost:${allowed}`]);
    expect(context.networkHosts).toEqual([{ host: 'localhost', port: allowed }]);
    expect(await run(context, `curl -sS http://localhost:${allowed}/`)).toEqual({
      is_error: false,
      content: 'hello-from-the-allowed-host',
    });
    expect(await run(context, `curl -sS --proxytunnel http://localhost:${allowed}/`)).toEqual({
      is_error: false,
      content: 'hello-from-the-allowed-host',
    });
  });

  it('refuses another port of the same host, and any way around the proxy', async () => {
    const context = await contextFor(`localhost:${allowed}`, [`localhost:${allowed}`]);
    const refused = await run(context, `curl -sS http://localhost:${other}/`);
    expect(refused.content).toContain(
      `Keel refused: localhost:${other} is not among this thread's network hosts`,
    );
    expect(refused.content).not.toContain('secret-of-another-service');
    const tunnel = await run(context, `curl -sS --proxytunnel http://localhost:${other}/`);
    expect(tunnel.is_error).toBe(true);
    expect(tunnel.content).not.toContain('secret-of-another-service');
    const around = await run(context, `curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:${allowed}/`);
    expect(around.is_error).toBe(true);
    expect(around.content).not.toContain('hello-from-the-allowed-host');
  });

  it('never reaches loopback through a wildcard: only an entry naming the host exactly does', async () => {
    const context = await contextFor('*', ['*']);
    // `*` allows the default ports only; on them, the name's loopback address is refused.
    const port = await run(context, `curl -sS http://localhost:${allowed}/`);
    expect(port.content).toContain(
      `Keel refused: localhost:${allowed} is not among this thread's network hosts`,
    );
    const refused = await run(context, 'curl -sS http://localhost/');
    expect(refused.content).toMatch(/Keel refused: localhost resolves to .*a loopback address/);
    const literal = await run(context, 'curl -sS http://127.0.0.1/');
    expect(literal.content).toContain('Keel refused: 127.0.0.1:80 is a loopback address');
    const tunnel = await run(context, 'curl -sS --proxytunnel https://[::ffff:7f00:1]/');
    expect(tunnel.is_error).toBe(true);
    expect(tunnel.content).toContain('403');
  });

  it('grants only what the operator allows, and nothing without a list', async () => {
    const context = await contextFor('*.example.org', ['api.example.org', 'evil.test', '*.org']);
    expect(context.networkHosts).toEqual([{ host: 'api.example.org' }]);
    const none = await contextFor('', [`localhost:${allowed}`]);
    expect(none.networkHosts).toEqual([]);
    const offline = await run(none, `curl -sS --max-time 5 http://localhost:${allowed}/`);
    expect(offline.is_error).toBe(true);
  });
});
