/**
 * The sandbox proxy decides on canonical addresses: every form of a loopback, private or
 * metadata address, by `CONNECT` and by an absolute-URI request, is refused through any
 * wildcard, and reached only through exact entries naming its host and port on both lists.
 * The proxy is the real one, spoken to over its Unix socket; the target is a real listener on
 * every loopback address (IPv4 and IPv6), so a form let through would answer.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { parseHostEntry, type HostEntry } from '../../platform/network-hosts';
import { resolveAllowed, startNetworkProxy, type NetworkProxy } from '../../activities/tools/network-proxy';
import { bypassForms } from '../helpers/bypass-forms';

const entries = (...raw: string[]): HostEntry[] => raw.map((entry) => parseHostEntry(entry) as HostEntry);

/** Sends `request` over the proxy's socket and returns all it answers (until it closes or 3 s). */
function ask(proxy: NetworkProxy, request: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(proxy.socket);
    let answer = '';
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(done, 3_000);
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString();
      // A tunnel that opened: speak HTTP through it, so a reached listener shows its secret.
      if (answer.startsWith('HTTP/1.1 200 Connection Established') && !answer.includes('secret'))
        socket.write('GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
    });
    socket.on('close', done);
    socket.on('error', done);
    socket.write(request);
  });
}

const hostPart = (form: string): string => (form.includes(':') && !form.startsWith('[') ? `[${form}]` : form);

describe("the sandbox proxy's decision", () => {
  const server = http.createServer((_request, response) => response.end('secret-of-the-local-service'));
  let port = 0;
  beforeAll(async () => {
    // `::` without ipv6Only takes IPv4 too: every loopback form that got through would answer.
    await new Promise<void>((resolve) => server.listen(0, '::', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => server.close());

  it.each(bypassForms)('refuses %s (%s) through a wildcard', async (form, _canonical, why) => {
    // The wildcards cover the listener's port: only the canonical check stands in the way.
    const options = { hosts: entries('*', `*:${port}`), operatorHosts: entries('*', `*:${port}`) };
    for (const wanted of [port, 80, 443])
      await expect(resolveAllowed(options, form, wanted)).rejects.toThrow(why);
  });

  it.each(['localhost', 'LOCALHOST.', 'localhost.'])(
    'resolves the name %s, then refuses the loopback address it leads to',
    async (name) => {
      const options = { hosts: entries('*'), operatorHosts: entries('*') };
      await expect(resolveAllowed(options, name, 443)).rejects.toThrow(
        /localhost resolves to .*a loopback address/,
      );
    },
  );

  it('reaches a special host only through exact entries naming host and port on both lists', async () => {
    const exact = { hosts: entries(`localhost:${port}`), operatorHosts: entries(`localhost:${port}`) };
    expect(['127.0.0.1', '::1']).toContain(await resolveAllowed(exact, 'localhost', port));
    await expect(resolveAllowed(exact, 'localhost', port + 1)).rejects.toThrow(/not among/);
    await expect(resolveAllowed(exact, '127.0.0.1', port)).rejects.toThrow(/not among/);
    // The thread's wildcard does not reach it, even where the operator named it.
    const threadWildcard = {
      hosts: entries('*', 'localhost:1'),
      operatorHosts: entries('*', 'localhost:443'),
    };
    await expect(resolveAllowed(threadWildcard, 'localhost', 443)).rejects.toThrow(/loopback/);
    // An address named exactly is reached in any of its forms, and only on its port.
    const address = { hosts: entries(`127.0.0.1:${port}`), operatorHosts: entries(`127.0.0.1:${port}`) };
    for (const form of ['127.0.0.1', '0x7f.1', '2130706433', '[::ffff:7f00:1]', '127.1'])
      expect(await resolveAllowed(address, form, port)).toBe('127.0.0.1');
    await expect(resolveAllowed(address, '0x7f.1', port + 1)).rejects.toThrow(/not among/);
    await expect(resolveAllowed(address, '[::1]', port)).rejects.toThrow(/not among/);
  });

  describe('over the wire', () => {
    let proxy: NetworkProxy;
    beforeAll(async () => {
      proxy = await startNetworkProxy({
        hosts: entries(`*:${port}`, `localhost:${port}`),
        operatorHosts: entries(`*:${port}`, `localhost:${port}`),
      });
    });
    afterAll(() => proxy.close());

    it.each(bypassForms.map(([form]) => form))('refuses CONNECT and GET to %s', async (form) => {
      for (const wanted of [port]) {
        const target = `${hostPart(form)}:${wanted}`;
        const tunnel = await ask(proxy, `CONNECT ${target} HTTP/1.1\r\nhost: ${target}\r\n\r\n`);
        expect(tunnel).toMatch(/^HTTP\/1.1 403 Forbidden[^]*Keel refused/);
        expect(tunnel).not.toContain('secret');
        const plain = await ask(
          proxy,
          `GET http://${target}/ HTTP/1.1\r\nhost: ${target}\r\nconnection: close\r\n\r\n`,
        );
        expect(plain).not.toContain('secret');
        expect(plain).toMatch(/^HTTP\/1.1 (403 Forbidden[^]*Keel refused|400 Bad Request)/);
      }
    });

    it('still reaches the exactly named host, by CONNECT and by GET', async () => {
      const target = `localhost:${port}`;
      expect(await ask(proxy, `CONNECT ${target} HTTP/1.1\r\nhost: ${target}\r\n\r\n`)).toContain(
        'secret-of-the-local-service',
      );
      expect(
        await ask(proxy, `GET http://${target}/ HTTP/1.1\r\nhost: ${target}\r\nconnection: close\r\n\r\n`),
      ).toContain('secret-of-the-local-service');
    });
  });
});
