/**
 * Where a URL a caller gives may lead: never to loopback, private, link-local, metadata or other
 * special-purpose addresses, unless the operator allowlists the host (`KEEL_WEBHOOK_ALLOW_HOSTS`).
 * Checked on the hostname and on every address it resolves to — at run creation (422) and again
 * at connect time, inside the socket's own lookup, so a name that re-resolves elsewhere is caught.
 */
import type { LookupAddress, LookupOptions } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** Why an address is refused, by the range it lies in (IANA special-purpose registries). */
const ranges: readonly [string, number, 'ipv4' | 'ipv6', string][] = [
  ['0.0.0.0', 8, 'ipv4', 'an unspecified ("this network") address'],
  ['10.0.0.0', 8, 'ipv4', 'a private address'],
  ['100.64.0.0', 10, 'ipv4', 'a shared (carrier-grade NAT) address'],
  ['127.0.0.0', 8, 'ipv4', 'a loopback address'],
  ['169.254.0.0', 16, 'ipv4', 'a link-local address'],
  ['172.16.0.0', 12, 'ipv4', 'a private address'],
  ['192.0.0.0', 24, 'ipv4', 'a protocol-assignment address'],
  ['192.168.0.0', 16, 'ipv4', 'a private address'],
  ['198.18.0.0', 15, 'ipv4', 'a benchmarking address'],
  ['224.0.0.0', 4, 'ipv4', 'a multicast address'],
  ['240.0.0.0', 4, 'ipv4', 'a reserved address'],
  ['::', 128, 'ipv6', 'an unspecified address'],
  ['::1', 128, 'ipv6', 'a loopback address'],
  ['fc00::', 7, 'ipv6', 'a private (unique local) address'],
  ['fe80::', 10, 'ipv6', 'a link-local address'],
  ['ff00::', 8, 'ipv6', 'a multicast address'],
];
/** Cloud metadata services outside the ranges above, and the names that lead to them. */
const metadataAddresses = ['169.254.169.254', '168.63.129.16', '100.100.100.200', 'fd00:ec2::254'];
const metadataNames = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data']);

const lists = ranges.map(([network, prefix, family, why]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { list, family, why };
});

/** The IPv4 address an IPv6 one carries (mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::`), if any. */
function embeddedIpv4(address: string): string | undefined {
  const match = /^(?:::ffff:|64:ff9b::)(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(
    address,
  );
  if (match === null) return undefined;
  if (match[1] !== undefined) return match[1];
  const high = parseInt(match[2]!, 16);
  const low = parseInt(match[3]!, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Why `address` (an IP literal) must not be reached, or undefined when it may. */
export function refusedAddress(address: string): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '').toLowerCase();
  const family = isIP(bare);
  if (family === 0) return 'not an IP address';
  const inner = family === 6 ? embeddedIpv4(bare) : undefined;
  if (inner !== undefined) return refusedAddress(inner);
  if (metadataAddresses.includes(bare)) return 'a cloud metadata address';
  const kind = family === 4 ? 'ipv4' : 'ipv6';
  return lists.find(({ list, family: listed }) => listed === kind && list.check(bare, kind))?.why;
}

export class RefusedUrl extends Error {
  override readonly name = 'RefusedUrl';
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
  if (metadataNames.has(host) || host === 'localhost' || host.endsWith('.localhost'))
    throw new RefusedUrl(`names ${host}, a local or metadata host`);
  let addresses: LookupAddress[];
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch {
    throw new RefusedUrl(`names ${host}, which does not resolve`);
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
