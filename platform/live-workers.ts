/**
 * The worker addresses an API reads live text from (decision 0390). A worker advertises its live
 * text URL in its Temporal identity, and anything that can poll the task queue can advertise any
 * URL; the API sends that URL a token for the thread, so it goes only where the operator said
 * workers are (`KEEL_API_LIVE_WORKERS`). An entry is an address or name, optionally with a port
 * (`10.0.3.7:7001`, `[fd00::7]:7001`, `keel-worker`), a CIDR block (`10.0.0.0/8`), or `*` for any.
 * Without a port an entry allows every port. The default is loopback: `npm start`, `keel up` and
 * `keel up --cluster` run every worker on this machine. Hosts are compared in canonical form
 * (./network-address.ts), so `http://2130706433:7001` is 127.0.0.1. Pure.
 */
import ipaddr from 'ipaddr.js';
import { canonicalHost } from './network-address';

export type LiveWorkerEntry =
  | { kind: 'any' }
  | { kind: 'host'; /** Canonical address or name. */ host: string; port?: number }
  | { kind: 'block'; address: string; prefix: number };

/** What an unset `KEEL_API_LIVE_WORKERS` means: this machine's loopback, any port. */
export const loopbackLiveWorkers = '127.0.0.0/8,::1,localhost';

/** The entry `raw` names, or a message saying why it is none. */
export function parseLiveWorkerEntry(raw: string): LiveWorkerEntry | string {
  const text = raw.trim().toLowerCase();
  if (text === '*') return { kind: 'any' };
  if (text.includes('/')) {
    try {
      const [address, prefix] = ipaddr.parseCIDR(text);
      return { kind: 'block', address: address.toString(), prefix };
    } catch {
      return `"${raw}" is not a CIDR block`;
    }
  }
  const match =
    /:.*:/.test(text) && !text.startsWith('[')
      ? ['', text]
      : /^(\[[^\]]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(text);
  if (match === null) return `"${raw}" is not a host, host:port or CIDR block`;
  const [, hostText = '', portText] = match;
  const host = canonicalHost(hostText);
  if (typeof host === 'string') return host;
  const port = portText === undefined ? undefined : Number(portText);
  if (port !== undefined && (port < 1 || port > 65_535)) return `"${raw}" has no valid port`;
  const canonical = host.kind === 'address' ? host.address : host.name;
  return port === undefined ? { kind: 'host', host: canonical } : { kind: 'host', host: canonical, port };
}

/** Parses a comma-separated list whose entries `parseLiveWorkerEntry` accepted. */
export function parseLiveWorkers(text: string): LiveWorkerEntry[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => parseLiveWorkerEntry(entry) as LiveWorkerEntry);
}

/**
 * Why the API will not read live text from `url`, or undefined when an entry allows it: only
 * `http:`/`https:` URLs with no user, query or fragment, at a host and port an entry names.
 */
export function refusedLiveUrl(entries: readonly LiveWorkerEntry[], url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'not a URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return `${parsed.protocol} is not HTTP`;
  if (parsed.username !== '' || parsed.password !== '' || parsed.search !== '' || parsed.hash !== '')
    return 'carries a user, query or fragment';
  const host = canonicalHost(parsed.hostname);
  if (typeof host === 'string') return host;
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  const allowed = entries.some((entry) => {
    if (entry.kind === 'any') return true;
    if (entry.kind === 'host')
      return (
        entry.host === (host.kind === 'address' ? host.address : host.name) && (entry.port ?? port) === port
      );
    if (host.kind !== 'address') return false;
    const address = ipaddr.parse(host.address);
    const block = ipaddr.parse(entry.address);
    return address.kind() === block.kind() && address.match(block, entry.prefix);
  });
  return allowed ? undefined : 'not in KEEL_API_LIVE_WORKERS';
}
