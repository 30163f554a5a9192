import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** Why an address is not on the public internet; an outbound fetch refuses these unless private hosts are allowed. */
export type AddressKind = 'unspecified' | 'loopback' | 'private' | 'link-local' | 'unique-local' | 'multicast' | 'reserved';

// Checked in this order, so the most telling kind names the address. node:net's BlockList matches an IPv4
// rule against the IPv4-mapped IPv6 form too (::ffff:127.0.0.1 is loopback).
const RANGES: Array<[AddressKind, Array<[string, number]>]> = [
  ['unspecified', [['0.0.0.0', 8], ['::', 128]]],
  ['loopback', [['127.0.0.0', 8], ['::1', 128]]],
  ['private', [['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['100.64.0.0', 10]]],
  ['link-local', [['169.254.0.0', 16], ['fe80::', 10]]],
  ['unique-local', [['fc00::', 7]]],
  ['multicast', [['224.0.0.0', 4], ['ff00::', 8]]],
  [
    'reserved',
    [
      // IETF protocol assignments, documentation, benchmarking, 240/4 and broadcast.
      ['192.0.0.0', 24], ['192.0.2.0', 24], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['240.0.0.0', 4],
      // Deprecated IPv4-compatible and site-local IPv6, IPv6 documentation.
      ['::', 96], ['fec0::', 10], ['2001:db8::', 32],
    ],
  ],
];

const LISTS = RANGES.map(([kind, subnets]) => {
  const list = new BlockList();
  for (const [network, prefix] of subnets) list.addSubnet(network, prefix, isIPv4(network) ? 'ipv4' : 'ipv6');
  return [kind, list] as const;
});

const TRANSLATED = new BlockList();
TRANSLATED.addSubnet('64:ff9b::', 96, 'ipv6'); // NAT64: the last 32 bits are an IPv4 address
const SIX_TO_FOUR = new BlockList();
SIX_TO_FOUR.addSubnet('2002::', 16, 'ipv6'); // 6to4: bits 16–47 are an IPv4 address

/** The 16 bytes of an IPv6 address (no zone; a dotted IPv4 tail allowed). */
function ipv6Bytes(address: string): number[] {
  const toBytes = (part: string | undefined) =>
    (part ? part.split(':') : []).flatMap((group) => {
      if (isIPv4(group)) return group.split('.').map(Number);
      const value = Number.parseInt(group, 16);
      return [value >> 8, value & 0xff];
    });
  const [head, tail] = address.split('::');
  const left = toBytes(head);
  const right = toBytes(tail);
  return [...left, ...new Array<number>(16 - left.length - right.length).fill(0), ...right];
}

/** The IPv4 address an IPv6 translation address (NAT64, 6to4) carries, if it is one. */
function embeddedIpv4(address: string): string | null {
  if (TRANSLATED.check(address, 'ipv6')) return ipv6Bytes(address).slice(12).join('.');
  if (SIX_TO_FOUR.check(address, 'ipv6')) return ipv6Bytes(address).slice(2, 6).join('.');
  return null;
}

/** The kind of a non-public IP address, or null for a public one. */
export function nonPublicKind(address: string): AddressKind | null {
  const bare = address.split('%')[0] ?? address;
  const family = isIPv6(bare) ? 'ipv6' : 'ipv4';
  for (const [kind, list] of LISTS) if (list.check(bare, family)) return kind;
  const embedded = family === 'ipv6' ? embeddedIpv4(bare) : null;
  return embedded === null ? null : nonPublicKind(embedded);
}

/** "a loopback address", "an unspecified address". */
export function describeKind(kind: AddressKind): string {
  return `${kind === 'unspecified' ? 'an' : 'a'} ${kind} address`;
}
