/**
 * One reading of a host as text, for every check that decides where Keel's sandbox proxy may
 * connect: an IP literal in any of the forms resolvers and URL parsers accept (decimal
 * `2130706433`, octal `0177.0.0.1`, hex `0x7f.1`, short `127.1`, IPv4-mapped
 * `[0::ffff:7f00:1]` is 127.0.0.1, zone ids dropped, upper case) becomes one canonical address;
 * anything else must be
 * a plain DNS name. Parsing is ipaddr.js's (docs/decisions/0315). Pure: the API, the config and
 * the worker's proxy all decide on the same reading.
 */
import ipaddr from 'ipaddr.js';

export type CanonicalHost =
  | { kind: 'address'; /** Dotted quad, or RFC 5952 IPv6 without a zone id. */ address: string }
  | { kind: 'name'; /** Lower case, no trailing dot. */ name: string };

const label = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
/** A last label a resolver would read as a number (WHATWG URL's "ends in a number"). */
const numericLabel = /^(?:\d+|0x[0-9a-f]*)$/;

/** The canonical form of `text` (a host, IPv6 with or without brackets), or why it is none. */
export function canonicalHost(text: string): CanonicalHost | string {
  const lower = text.toLowerCase();
  const bracketed = /^\[(.*)\]$/.exec(lower);
  // In brackets only IPv6 (`%25` is a zone id's `%` in a URL).
  if (bracketed !== null) {
    const inner = bracketed[1]!.replace(/%25/, '%');
    return ipaddr.IPv6.isValid(inner)
      ? { kind: 'address', address: canonicalAddress(ipaddr.IPv6.parse(inner)) }
      : `"${text}" is not an IPv6 address`;
  }
  const bare = lower;
  if (ipaddr.isValid(bare)) return { kind: 'address', address: canonicalAddress(ipaddr.parse(bare)) };
  const name = bare.endsWith('.') ? bare.slice(0, -1) : bare;
  const labels = name.split('.');
  if (name.length > 253 || !labels.every((part) => label.test(part)))
    return `"${text}" is neither an IP address nor a host name`;
  // Not an address ipaddr.js reads, yet numeric at the end (`1.2.3.4.5`, `0x7f.0x`): a resolver
  // might read it some other way, so it is nothing.
  if (numericLabel.test(labels.at(-1)!)) return `"${text}" is neither an IP address nor a host name`;
  return { kind: 'name', name };
}

function canonicalAddress(address: ipaddr.IPv4 | ipaddr.IPv6): string {
  if (address.kind() === 'ipv4') return address.toString();
  const v6 = ipaddr.IPv6.parse((address as ipaddr.IPv6).toNormalizedString().replace(/%.*$/, ''));
  // `::ffff:127.0.0.1` is 127.0.0.1 on a dual-stack socket: one address, one form.
  return v6.isIPv4MappedAddress() ? v6.toIPv4Address().toString() : v6.toRFC5952String();
}

const v4Reasons: Record<string, string> = {
  unspecified: 'an unspecified ("this network") address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a shared (carrier-grade NAT) address',
  private: 'a private address',
};
const v6Reasons: Record<string, string> = {
  unspecified: 'an unspecified address',
  linkLocal: 'a link-local address',
  multicast: 'a multicast address',
  loopback: 'a loopback address',
  uniqueLocal: 'a private (unique local) address',
  teredo: 'a Teredo tunnel address',
};
/** Cloud metadata services, some outside the ranges above (Azure's is public unicast). */
const metadataAddresses = new Set(['169.254.169.254', '168.63.129.16', '100.100.100.200', 'fd00:ec2::254']);
const metadataNames = new Set(['metadata', 'metadata.google.internal', 'metadata.goog', 'instance-data']);
const nat64 = ipaddr.IPv6.parse('64:ff9b::');
const sixToFour = ipaddr.IPv6.parse('2002::');
const globalUnicast = ipaddr.IPv6.parse('2000::');

/** The IPv4 address an IPv6 one leads to (mapped, NAT64 `64:ff9b::/96`, 6to4), if any. */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  if (address.isIPv4MappedAddress()) return address.toIPv4Address();
  const bytes = address.toByteArray();
  if (address.match(nat64, 96)) return new ipaddr.IPv4(bytes.slice(12, 16));
  if (address.match(sixToFour, 16)) return new ipaddr.IPv4(bytes.slice(2, 6));
  return undefined;
}

/**
 * Why a canonical address must not be reached through a wildcard, or undefined when it is a
 * public unicast address. Everything not known to be public is refused: loopback, private,
 * link-local, carrier-grade NAT, unspecified, multicast, broadcast, reserved, metadata, and
 * IPv6 outside global unicast; an IPv6 address carrying an IPv4 one is judged by that one.
 */
export function specialAddress(address: string): string | undefined {
  if (metadataAddresses.has(address)) return 'a cloud metadata address';
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv4') {
    const range = parsed.range();
    return range === 'unicast' ? undefined : (v4Reasons[range] ?? 'a reserved address');
  }
  const v6 = parsed as ipaddr.IPv6;
  const inner = embeddedIpv4(v6);
  if (inner !== undefined) return specialAddress(inner.toString());
  const range = v6.range();
  if (v6Reasons[range] !== undefined) return v6Reasons[range];
  return range === 'unicast' && v6.match(globalUnicast, 3) ? undefined : 'a reserved address';
}

/** Why a host name stands for loopback or a metadata service whatever it resolves to, if it does. */
export function specialName(name: string): string | undefined {
  if (name === 'localhost' || name.endsWith('.localhost')) return 'a loopback name';
  if (metadataNames.has(name)) return 'a cloud metadata name';
  return undefined;
}

/** Why a canonical host is special (an address or a name), if it is. */
export const specialHost = (host: CanonicalHost): string | undefined =>
  host.kind === 'address' ? specialAddress(host.address) : specialName(host.name);
