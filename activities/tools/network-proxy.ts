/**
 * The only way out of a sandbox that has no network of its own: an HTTP proxy (plain requests
 * and `CONNECT` tunnels) on a Unix socket that is bound into the sandbox, one per command. It
 * lets through only the thread's hosts (`network_hosts`, within the operator's list), and
 * decides on canonical addresses (docs/decisions/0315): the host a request names is read once
 * (`0x7f.1`, `[0::ffff:7f00:1]` and `2130706433` are all 127.0.0.1), a name is resolved once,
 * every address checked, and the proxy connects to the address it checked, so nothing can
 * re-resolve between check and connect. A loopback, private, link-local or metadata address is
 * reached only when the operator's list and the thread's name that host and port exactly
 * (decisions 0086, 0316).
 */
import { lookup } from 'node:dns/promises';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { canonicalHost, specialAddress } from '../../platform/network-address';
import { allowsHost, namesExactly, type HostEntry } from '../../platform/network-hosts';
import { KeelError } from '../../common/errors';

export interface NetworkProxy {
  /** The proxy's socket on the host. */
  socket: string;
  /** The in-sandbox forwarder's script on the host (`forwarderSource`). */
  forwarder: string;
  close(): Promise<void>;
}

export interface NetworkProxyOptions {
  /** The thread's hosts, as `Sandbox.grant` let them through. */
  hosts: readonly HostEntry[];
  /** The operator's list (`KEEL_SANDBOX_NETWORK_HOSTS`): only its exact entries reach special hosts. */
  operatorHosts: readonly HostEntry[];
}

class Refused extends KeelError {}

/**
 * The address to connect to for `host:port` (the host as the request wrote it), or `Refused`
 * saying why not. Decisive: the API's and the config's checks only fail faster.
 */
export async function resolveAllowed(
  options: NetworkProxyOptions,
  host: string,
  port: number,
): Promise<string> {
  if (!Number.isInteger(port) || port < 1 || port > 65_535) throw new Refused(`port ${port} is not a port`);
  const canonical = canonicalHost(host);
  if (typeof canonical === 'string') throw new Refused(canonical);
  const wanted = canonical.kind === 'address' ? canonical.address : canonical.name;
  const shown = `${wanted.includes(':') ? `[${wanted}]` : wanted}:${port}`;
  if (!allowsHost(options.hosts, wanted, port) || !allowsHost(options.operatorHosts, wanted, port))
    throw new Refused(`${shown} is not among this thread's network hosts`);
  // Special hosts need an exact entry on both lists: no wildcard, the operator's or the
  // thread's, reaches them.
  const exact =
    options.operatorHosts.some((entry) => namesExactly(entry, wanted, port)) &&
    options.hosts.some((entry) => namesExactly(entry, wanted, port));
  if (canonical.kind === 'address') {
    const why = specialAddress(canonical.address);
    if (why !== undefined && !exact) throw new Refused(`${shown} is ${why}`);
    return canonical.address;
  }
  let addresses: string[];
  try {
    // Once: the address checked below is the one connected to (no second lookup to rebind).
    const found = await lookup(canonical.name, { all: true, verbatim: true });
    addresses = found.flatMap(({ address }) => {
      const read = canonicalHost(address);
      return typeof read !== 'string' && read.kind === 'address' ? [read.address] : [];
    });
  } catch {
    throw new Refused(`${canonical.name} does not resolve`);
  }
  if (addresses[0] === undefined) throw new Refused(`${canonical.name} does not resolve`);
  if (!exact)
    for (const address of addresses) {
      const why = specialAddress(address);
      if (why !== undefined) throw new Refused(`${canonical.name} resolves to ${address}, ${why}`);
    }
  return addresses[0];
}

function refuse(socket: net.Socket, why: string): void {
  socket.end(
    `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\nKeel refused: ${why}\n`,
  );
}

/** Starts a proxy for one command; `close` stops it and removes its socket. */
export async function startNetworkProxy(options: NetworkProxyOptions): Promise<NetworkProxy> {
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
    resolveAllowed(options, target.hostname, port).then(
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
    resolveAllowed(options, match[1]!, port).then(
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
