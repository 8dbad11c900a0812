/**
 * Which hosts a thread's sandboxed commands may reach through Keel's proxy. An entry is a host
 * name or IP (`pypi.org`), a wildcard for its subdomains (`*.pythonhosted.org`), either with a
 * port (`localhost:8443`), or `*` for any public host (`*:8080` on that port). An entry without a
 * port allows ports 80 and 443 only (docs/decisions/0316). The operator lists what threads may ask for
 * (`KEEL_SANDBOX_NETWORK_HOSTS`); a thread (or its assistant) asks for some of it
 * (`network_hosts`). Hosts are compared in canonical form (./network-address.ts). No wildcard
 * ever covers a loopback, private, link-local or metadata host: only an operator's entry naming
 * that host exactly, with its port, does. Pure: the config, the API and the worker's proxy all
 * decide with it.
 */
import { canonicalHost, specialHost, specialName } from './network-address';

export interface HostEntry {
  /** `*`; `*.example.org` for subdomains of example.org; else a canonical name or address. */
  host: string;
  /** Absent: the default ports, 80 and 443. */
  port?: number;
}

/** The ports an entry without one allows: plain and TLS HTTP. */
export const defaultPorts: readonly number[] = [80, 443];

const portsOf = (entry: HostEntry): readonly number[] =>
  entry.port === undefined ? defaultPorts : [entry.port];

const isWildcard = (host: string): boolean => host === '*' || host.startsWith('*.');

/** The entry `raw` names, in canonical form, or a message saying why it is not one. */
export function parseHostEntry(raw: string): HostEntry | string {
  const text = raw.trim().toLowerCase();
  // IPv6 takes a port only in brackets; bare, every colon is the address's.
  const match =
    /:.*:/.test(text) && !text.startsWith('[')
      ? ['', text]
      : /^(\[[^\]]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(text);
  if (match === null) return `"${raw}" is not a host, *.domain or host:port`;
  const [, hostText = '', portText] = match;
  const port = portText === undefined ? undefined : Number(portText);
  if (port !== undefined && (port < 1 || port > 65_535)) return `"${raw}" has no valid port`;
  if (hostText.includes('%')) return `"${raw}" has a zone id: name the address without one`;
  if (hostText === '*') return port === undefined ? { host: '*' } : { host: '*', port };
  const wildcard = hostText.startsWith('*.');
  const host = canonicalHost(wildcard ? hostText.slice(2) : hostText);
  if (typeof host === 'string') return `"${raw}" is not a host, *.domain or host:port`;
  let canonical: string;
  if (!wildcard) canonical = host.kind === 'address' ? host.address : host.name;
  else if (host.kind === 'address') return `"${raw}": a wildcard covers names, not addresses`;
  else if (specialName(host.name) !== undefined)
    return `"${raw}": a wildcard never covers ${specialName(host.name)}; name the host and port exactly`;
  else canonical = `*.${host.name}`;
  return port === undefined ? { host: canonical } : { host: canonical, port };
}

/** The entry as text (`host`, `host:port`, `[v6]:port`), as the API stores and shows it. */
export function formatHostEntry(entry: HostEntry): string {
  if (entry.port === undefined) return entry.host;
  return `${entry.host.includes(':') ? `[${entry.host}]` : entry.host}:${entry.port}`;
}

function hostMatches(pattern: string, host: string): boolean {
  if (pattern === '*') return true;
  if (pattern.startsWith('*.')) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
  return pattern === host;
}

/** Whether `entries` let a command reach `host` (canonical) on `port`. */
export function allowsHost(entries: readonly HostEntry[], host: string, port: number): boolean {
  return entries.some((entry) => hostMatches(entry.host, host) && portsOf(entry).includes(port));
}

/** Whether `entry` names `host` (canonical) and `port` exactly: no wildcard, the port its own. */
export const namesExactly = (entry: HostEntry, host: string, port: number): boolean =>
  !isWildcard(entry.host) && entry.host === host && portsOf(entry).includes(port);

/**
 * Why `entry` asks for something beyond what `granted` allows, or undefined when it does not.
 * An entry for a special host (loopback, private, metadata, `localhost`) is within only an
 * exact grant of the same host; a wildcard grant never covers it.
 */
export function notCoveredBy(granted: readonly HostEntry[], entry: HostEntry): string | undefined {
  const host = isWildcard(entry.host) ? undefined : canonicalHost(entry.host);
  const special = host === undefined || typeof host === 'string' ? undefined : specialHost(host);
  const covers = (allowed: HostEntry): boolean => {
    if (special !== undefined) return !isWildcard(allowed.host) && allowed.host === entry.host;
    if (allowed.host === '*') return true;
    if (entry.host === '*') return false;
    // `*.a.example.org` is within `*.example.org`: every host it matches, the other does too.
    if (entry.host.startsWith('*.'))
      return allowed.host.startsWith('*.') && entry.host.slice(1).endsWith(allowed.host.slice(1));
    return hostMatches(allowed.host, entry.host);
  };
  const uncovered = portsOf(entry).find(
    (port) => !granted.some((allowed) => covers(allowed) && portsOf(allowed).includes(port)),
  );
  if (uncovered === undefined) return undefined;
  const where = `${entry.host}${entry.port === undefined ? ` (port ${uncovered})` : `:${entry.port}`}`;
  return special === undefined
    ? `${where} is not within the operator's list`
    : `${where} is ${special}: only an operator entry naming it exactly, with its port, allows it`;
}

/** Whether `entry` asks for nothing beyond what `granted` allows. */
export const coveredBy = (granted: readonly HostEntry[], entry: HostEntry): boolean =>
  notCoveredBy(granted, entry) === undefined;
