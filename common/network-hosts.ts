/**
 * Which hosts a thread's sandboxed commands may reach through Keel's proxy. An entry is a host
 * name or IP (`pypi.org`), a wildcard for its subdomains (`*.pythonhosted.org`), either with a
 * port (`localhost:8443`), or `*` for any host. The operator lists what threads may ask for
 * (`KEEL_SANDBOX_NETWORK_HOSTS`); a thread (or its assistant) asks for some of it
 * (`network_hosts`). Pure: the API checks a request with it, the worker's proxy every connection.
 */

export interface HostEntry {
  /** Lower case; `*` for any host; `*.example.org` for subdomains of example.org. */
  host: string;
  port?: number;
}

const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** The entry `raw` names, or a message saying why it is not one. */
export function parseHostEntry(raw: string): HostEntry | string {
  const text = raw.trim().toLowerCase();
  if (text === '*') return { host: '*' };
  const match = /^(\[[0-9a-f:.]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(text);
  if (match === null) return `"${raw}" is not a host, *.domain or host:port`;
  const host = match[1]!.replace(/^\[|\]$/g, '');
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && (port < 1 || port > 65_535)) return `"${raw}" has no valid port`;
  const name = host.startsWith('*.') ? host.slice(2) : host;
  const isAddress = /^[0-9.]+$/.test(name) || name.includes(':');
  if (!isAddress && !name.split('.').every((part) => label.test(part)))
    return `"${raw}" is not a host, *.domain or host:port`;
  return port === undefined ? { host } : { host, port };
}

function hostMatches(pattern: string, host: string): boolean {
  if (pattern === '*') return true;
  if (pattern.startsWith('*.')) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
  return pattern === host;
}

/** Whether `entries` let a command reach `host` on `port`. */
export function allowsHost(entries: readonly HostEntry[], host: string, port: number): boolean {
  const wanted = host.toLowerCase().replace(/^\[|\]$/g, '');
  return entries.some(
    (entry) => hostMatches(entry.host, wanted) && (entry.port === undefined || entry.port === port),
  );
}

/** Whether `entry` asks for nothing beyond what `granted` allows. */
export function coveredBy(granted: readonly HostEntry[], entry: HostEntry): boolean {
  return granted.some((allowed) => {
    if (allowed.port !== undefined && allowed.port !== entry.port) return false;
    if (allowed.host === '*') return true;
    if (entry.host === '*') return false;
    // `*.a.example.org` is within `*.example.org`: every host it matches, the other does too.
    if (entry.host.startsWith('*.'))
      return allowed.host.startsWith('*.') && entry.host.slice(1).endsWith(allowed.host.slice(1));
    return hostMatches(allowed.host, entry.host);
  });
}

/** Whether the entry names one host exactly (no wildcard): only such a host may be private. */
export const namesExactly = (entry: HostEntry, host: string): boolean =>
  entry.host === host.toLowerCase().replace(/^\[|\]$/g, '');
