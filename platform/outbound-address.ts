/**
 * Where a URL a caller gives may lead: never to loopback, private, link-local, metadata or other
 * special-purpose addresses, unless the operator allowlists the host (`KEEL_WEBHOOK_ALLOW_HOSTS`).
 * Checked on the hostname and on every address it resolves to — at run creation (422) and again
 * at connect time, inside the socket's own lookup, so a name that re-resolves elsewhere is caught.
 * A name that does not resolve at run creation is taken (DNS may come back before the run ends;
 * LangGraph takes any URL): delivery resolves it again, and retries while it does not resolve.
 */
import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { canonicalHost, specialAddress, specialName } from './network-address';
import { KeelError } from '../common/errors';

/**
 * Why `address` (an IP literal, in any form) must not be reached, or undefined when it may: the
 * sandbox proxy's reading and ranges (common/network-address.ts, docs/decisions/0315), so a
 * webhook and a sandboxed command are refused the same addresses.
 */
export function refusedAddress(address: string): string | undefined {
  const host = canonicalHost(address);
  if (typeof host === 'string' || host.kind !== 'address') return 'not an IP address';
  return specialAddress(host.address);
}

export class RefusedUrl extends KeelError {
  override readonly name: string = 'RefusedUrl';
}

/** The URL names a host that does not resolve (now): nothing says where it leads. */
export class UnresolvedHost extends RefusedUrl {
  override readonly name = 'UnresolvedHost';
}

/** Hostname as allowlists name it: lower case, IPv6 without brackets. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

/** The URL with no credentials, query or fragment: what logs may show. */
export function redactUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return '(not a URL)';
  }
}

/**
 * Resolves when `raw` may be reached; rejects with `RefusedUrl` saying why not. A host in
 * `allowHosts` (or `*` there) is reached whatever its addresses.
 */
export async function checkOutboundUrl(raw: string, allowHosts: readonly string[]): Promise<void> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RefusedUrl('is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new RefusedUrl('is not http(s)');
  const host = hostOf(url);
  if (allowHosts.includes('*') || allowHosts.includes(host)) return;
  if (isIP(host) !== 0) {
    const why = refusedAddress(host);
    if (why !== undefined) throw new RefusedUrl(`points to ${host}, ${why}`);
    return;
  }
  if (specialName(host) !== undefined) throw new RefusedUrl(`names ${host}, a local or metadata host`);
  let addresses: LookupAddress[];
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch {
    throw new UnresolvedHost(`names ${host}, which does not resolve`);
  }
  for (const { address } of addresses) {
    const why = refusedAddress(address);
    if (why !== undefined) throw new RefusedUrl(`names ${host}, which resolves to ${address}, ${why}`);
  }
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for `http.request` that refuses special-purpose addresses at connect time (unless
 * `host` is allowlisted), so what was checked is what is connected to.
 */
export function guardedLookup(allowHosts: readonly string[]) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    const host = hostname.toLowerCase();
    lookup(host, { all: true, verbatim: true }).then(
      (addresses) => {
        const allowed = allowHosts.includes('*') || allowHosts.includes(host);
        const bad = allowed
          ? undefined
          : addresses.find(({ address }) => refusedAddress(address) !== undefined);
        if (bad !== undefined) {
          const error: NodeJS.ErrnoException = new RefusedUrl(
            `${host} resolves to ${bad.address}, ${refusedAddress(bad.address)}`,
          );
          error.code = 'EREFUSED_ADDRESS';
          callback(error, []);
          return;
        }
        if (options.all === true) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, []),
    );
  };
}
