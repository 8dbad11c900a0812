/**
 * The only way out of a sandbox that has no network of its own: an HTTP proxy (plain requests
 * and `CONNECT` tunnels) on a Unix socket that is bound into the sandbox, one per command. It
 * lets through only the thread's hosts (`network_hosts`, within the operator's list), resolves
 * each name itself and connects to the address it checked, so a name cannot re-resolve to
 * loopback, a private network or a metadata service between check and connect. Such an address
 * is reached only when an entry names its host exactly (docs/decisions/0086).
 */
import { lookup } from 'node:dns/promises';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { allowsHost, namesExactly, type HostEntry } from '../../common/network-hosts';
import { refusedAddress } from '../outbound-address';

export interface NetworkProxy {
  /** The proxy's socket on the host. */
  socket: string;
  /** The in-sandbox forwarder's script on the host (`forwarderSource`). */
  forwarder: string;
  close(): Promise<void>;
}

class Refused extends Error {}

/** The address to connect to for `host:port`, or `Refused` saying why not. */
async function resolveAllowed(entries: readonly HostEntry[], host: string, port: number): Promise<string> {
  const bare = host.toLowerCase().replace(/^\[|\]$/g, '');
  if (!allowsHost(entries, bare, port))
    throw new Refused(`${bare}:${port} is not among this thread's network hosts`);
  const exact = entries.some((entry) => namesExactly(entry, bare));
  let addresses: string[];
  if (net.isIP(bare) !== 0) addresses = [bare];
  else {
    try {
      addresses = (await lookup(bare, { all: true, verbatim: true })).map(({ address }) => address);
    } catch {
      throw new Refused(`${bare} does not resolve`);
    }
  }
  const usable = exact ? addresses : addresses.filter((address) => refusedAddress(address) === undefined);
  if (usable[0] === undefined)
    throw new Refused(`${bare} resolves to ${addresses.join(', ')}, ${refusedAddress(addresses[0] ?? '')}`);
  return usable[0];
}

function refuse(socket: net.Socket, why: string): void {
  socket.end(
    `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nKeel refused: ${why}\n`,
  );
}

/** Starts a proxy for one command; `close` stops it and removes its socket. */
export async function startNetworkProxy(entries: readonly HostEntry[]): Promise<NetworkProxy> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'keel-proxy-'));
  const socket = path.join(directory, 'proxy.sock');
  const forwarder = path.join(directory, 'forward.js');
  await writeFile(forwarder, forwarderSource, { mode: 0o644 });
  const open = new Set<net.Socket>();
  const track = (peer: net.Socket) => {
    open.add(peer);
    peer.on('close', () => open.delete(peer));
  };

  const server = http.createServer((request, response) => {
    // A plain HTTP request in absolute form (`GET http://host/path`), forwarded as it is.
    let target: URL;
    try {
      target = new URL(request.url ?? '');
      if (target.protocol !== 'http:') throw new Error('not http');
    } catch {
      response
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('Keel: send requests through this proxy\n');
      return;
    }
    const port = Number(target.port || 80);
    resolveAllowed(entries, target.hostname, port).then(
      (address) => {
        const upstream = http.request({
          host: address,
          port,
          method: request.method,
          path: `${target.pathname}${target.search}`,
          headers: { ...request.headers, host: target.host },
        });
        upstream.on('response', (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        });
        upstream.on('error', (error) => {
          if (!response.headersSent) response.writeHead(502, { 'content-type': 'text/plain' });
          response.end(`Keel: ${target.host} could not be reached: ${error.message}\n`);
        });
        request.pipe(upstream);
      },
      (error: unknown) => {
        const why = error instanceof Refused ? error.message : String(error);
        response.writeHead(403, { 'content-type': 'text/plain' }).end(`Keel refused: ${why}\n`);
      },
    );
  });

  server.on('connection', track);
  server.on('connect', (request: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(request.url ?? '');
    if (match === null) {
      refuse(client, `"${request.url ?? ''}" is not host:port`);
      return;
    }
    const port = Number(match[2]);
    resolveAllowed(entries, match[1]!, port).then(
      (address) => {
        const upstream = net.connect(port, address, () => {
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          if (head.length > 0) upstream.write(head);
          upstream.pipe(client);
          client.pipe(upstream);
        });
        track(upstream);
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
      },
      (error: unknown) => {
        const why = error instanceof Refused ? error.message : String(error);
        refuse(client, why);
      },
    );
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, resolve);
  });
  // The command may run as another (unprivileged) uid; the socket is reachable only where it
  // is bound, inside that one sandbox.
  await chmod(socket, 0o666);
  await chmod(directory, 0o711);
  return {
    socket,
    forwarder,
    async close() {
      for (const peer of open) peer.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/**
 * Runs inside the sandbox: listens on 127.0.0.1:`port` and carries each connection to the
 * proxy's socket, so tools that honour `HTTP(S)_PROXY` find it. Marks itself ready with a file.
 */
export const forwarderSource = `
const net = require('node:net');
const [socket, port, ready] = process.argv.slice(2);
net
  .createServer((client) => {
    const proxy = net.connect(socket);
    client.pipe(proxy);
    proxy.pipe(client);
    client.on('error', () => proxy.destroy());
    proxy.on('error', () => client.destroy());
  })
  .listen(Number(port), '127.0.0.1', () => require('node:fs').writeFileSync(ready, ''));
`;
