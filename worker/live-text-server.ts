/**
 * The worker's live text endpoint (decision 0340): `GET /live-text?workflow_id&run_id&step&attempt`
 * streams one model call attempt's text as NDJSON, `{"text","chars"}` per piece as the model sent
 * it (what it had so far first), then `{"end":"completed"|"failed"}`. Only a bearer token the API
 * signed for that workflow id opens it (codec/live-text-token.ts); anything else is 401.
 * `POST /beat?workflow_id` (the same token) makes that workflow's model calls on this worker beat
 * at once, so that a Stop the API took reaches them (decision 0420).
 * `GET /worker` answers which process serves (decision 0412).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { hostname, networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import type { EncryptionKey } from '../codec/aes-gcm-codec';
import { LiveTextKeys } from '../codec/live-text-token';
import { LiveTextHub, type LiveCallKey } from '../activities/live-text';
import type { TokenChannelConfig } from '../platform/config';

/** How long a request waits for an attempt the server already reports started to register. */
const registrationWaitMs = 2_000;

export interface LiveTextServerOptions {
  hub: LiveTextHub;
  keys: LiveTextKeys;
  host: string;
  /** 0: any free port. */
  port: number;
  /**
   * The URL the API reaches this server at; @default `http://<host>:<port>`, with a wildcard
   * `host` replaced by an address of this machine (`reachableHost`)
   */
  advertisedUrl?: string | undefined;
}

export interface LiveTextServer {
  /** What the worker advertises in its identity. */
  url: string;
  close(): Promise<void>;
}

/** The marker in a worker's identity that names its live text endpoint. */
export const liveUrlMarker = ' live=';

/** A worker identity advertising `url`: the SDK's `pid@host`, then the marker. */
export const identityWithLiveUrl = (identity: string, url: string): string =>
  `${identity}${liveUrlMarker}${url}`;

function keyOf(url: URL): LiveCallKey | undefined {
  const workflowId = url.searchParams.get('workflow_id');
  const runId = url.searchParams.get('run_id');
  const step = Number(url.searchParams.get('step'));
  const attempt = Number(url.searchParams.get('attempt'));
  if (workflowId === null || runId === null || !Number.isSafeInteger(step) || !Number.isSafeInteger(attempt))
    return undefined;
  return { workflow_id: workflowId, run_id: runId, step, attempt };
}

const refuse = (response: ServerResponse, status: number, message: string): void => {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: message }));
};

/** The process serving, as a worker's identity names it (the SDK's `pid@host`). */
const thisProcess = `${process.pid}@${hostname()}`;

/** Whether the request carries a token the API signed for `workflowId`. */
function authorized(options: LiveTextServerOptions, request: IncomingMessage, workflowId: string): boolean {
  const authorization = request.headers.authorization ?? '';
  const token = authorization.startsWith('Bearer ') ? authorization.slice('Bearer '.length) : '';
  return options.keys.verify(token, workflowId);
}

/**
 * A beat asked for: only a heartbeat, whose answer from Temporal says whether the call stops. A
 * workflow with no model call here is 404 and nothing is done.
 */
function beat(options: LiveTextServerOptions, request: IncomingMessage, response: ServerResponse, url: URL) {
  if (request.method !== 'POST') return refuse(response, 405, 'POST only');
  const workflowId = url.searchParams.get('workflow_id');
  if (workflowId === null) return refuse(response, 400, 'workflow_id is required');
  if (!authorized(options, request, workflowId)) return refuse(response, 401, 'no valid token');
  const beats = options.hub.beats.beatNow(workflowId);
  if (beats === 0) return refuse(response, 404, 'no model call of that workflow on this worker');
  response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  response.end(JSON.stringify({ beats }));
}

async function serve(options: LiveTextServerOptions, request: IncomingMessage, response: ServerResponse) {
  const url = new URL(request.url ?? '/', 'http://worker');
  // Which process serves here: what tells a tool call's workflow its worker still runs (decision
  // 0412). It says no more than the identity the worker already shows everyone on Temporal.
  if (url.pathname === '/worker' && request.method === 'GET') {
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    return void response.end(JSON.stringify({ worker: thisProcess }));
  }
  if (url.pathname === '/beat') return beat(options, request, response, url);
  if (url.pathname !== '/live-text') return refuse(response, 404, 'not found');
  if (request.method !== 'GET') return refuse(response, 405, 'GET only');
  const key = keyOf(url);
  if (key === undefined) return refuse(response, 400, 'workflow_id, run_id, step and attempt are required');
  if (!authorized(options, request, key.workflow_id)) return refuse(response, 401, 'no valid token');
  const gone = new AbortController();
  response.on('close', () => gone.abort());
  const call = await options.hub.find(key, registrationWaitMs, gone.signal);
  if (gone.signal.aborted) return;
  if (call === undefined) return refuse(response, 404, 'no such model call on this worker');
  response.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store' });
  response.flushHeaders();
  let sent = 0;
  const flush = () => {
    let lines = '';
    while (sent < call.pieces.length) lines += `${JSON.stringify(call.pieces[sent++])}\n`;
    if (call.end !== undefined) lines += `${JSON.stringify({ end: call.end })}\n`;
    if (lines !== '') response.write(lines);
    if (call.end !== undefined) {
      stop();
      response.end();
    }
  };
  const stop = call.watch(flush);
  gone.signal.addEventListener('abort', stop);
  flush();
}

export async function startLiveTextServer(options: LiveTextServerOptions): Promise<LiveTextServer> {
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => {
    serve(options, request, response).catch(() => {
      if (!response.headersSent) refuse(response, 500, 'live text failed');
      else response.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const reachable = reachableHost(options.host);
  const host = reachable.includes(':') ? `[${reachable}]` : reachable;
  return {
    url: options.advertisedUrl ?? `http://${host}:${port}`,
    close: () =>
      new Promise((resolve) => {
        // Open streams end with the worker: their readers go back to the server's description.
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * The address an API can reach a server bound to `host` at: `host` itself, or for a wildcard
 * bind (`0.0.0.0`, `::`) this machine's first external address, IPv4 first — a container's
 * address on its network, which is how each worker of a scaled compose service is told apart
 * (decision 0461). Loopback when there is none.
 */
export function reachableHost(
  host: string,
  interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces(),
): string {
  if (!['0.0.0.0', '::', '[::]'].includes(host)) return host;
  const external = Object.values(interfaces)
    .flatMap((entries) => entries ?? [])
    .filter((entry) => !entry.internal && !entry.address.startsWith('fe80:'));
  return (external.find((entry) => entry.family === 'IPv4') ?? external[0])?.address ?? '127.0.0.1';
}

/** A worker's live channel: the hub its model calls write to, the server, and the identity to poll with. */
export interface LiveTextChannel {
  hub: LiveTextHub;
  server: LiveTextServer;
  identity: string;
}

/**
 * The live channel a worker of this configuration runs, or undefined on the history channel.
 * `keys` are the worker's encryption keys, from which the token key is derived.
 */
export async function startLiveTextChannel(
  tokens: TokenChannelConfig,
  keys: readonly EncryptionKey[],
): Promise<LiveTextChannel | undefined> {
  if (tokens.channel !== 'live') return undefined;
  const hub = new LiveTextHub();
  const server = await startLiveTextServer({
    hub,
    keys: new LiveTextKeys(keys),
    host: tokens.host,
    port: tokens.port,
    advertisedUrl: tokens.advertisedUrl,
  });
  return { hub, server, identity: identityWithLiveUrl(thisProcess, server.url) };
}
