import { isIPv4, isIPv6 } from 'node:net';
import type { TrustProxy } from '../config.js';

/** Fastify's `trustProxy` option: which addresses in front of the service are believed to be proxies. */
export type ProxyTrust = false | string[] | ((address: string, hop: number) => boolean);

/**
 * Fastify's `trustProxy` from TRUST_PROXY. A hop count becomes a trust function over proxy-addr's hops (0 is
 * the socket peer, then X-Forwarded-For from the right): the peer and the next `hops - 1` entries are
 * proxies, so the client IP is the `hops`-th entry from the right, never one a client wrote further left.
 * Fastify 5 itself treats a bare number as "trust nothing".
 */
export function proxyTrust(setting: TrustProxy): ProxyTrust {
  if (typeof setting !== 'number') return setting;
  const hops = setting;
  return (_address, hop) => hop < hops;
}

const MAPPED_IPV4 = /^::ffff:([\d.]+)$/i;

/** The eight 16-bit groups of an IPv6 address (zone dropped, an embedded IPv4 tail included); null when it is not one. */
function ipv6Groups(address: string): number[] | null {
  const bare = address.split('%')[0]!;
  if (!isIPv6(bare)) return null;
  // The WHATWG URL parser prints an IPv6 host canonically: lower-case hex groups, one `::` at most, no dotted tail.
  let canonical: string;
  try {
    canonical = new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
  const [head, tail] = canonical.split('::') as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(':').map((group) => Number.parseInt(group, 16)) : []);
  const left = groups(head);
  const right = groups(tail);
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * The key a client's budgets and stream counts are kept under: an IPv4 address as it is (an IPv4-mapped IPv6
 * address is that IPv4 address), an IPv6 address by its /64. One subscriber is usually given a whole /64 and
 * may use any address in it, so a budget per IPv6 address would be no budget at all.
 */
export function budgetKeyOf(ip: string | undefined): string {
  if (!ip) return 'unknown';
  if (isIPv4(ip)) return ip;
  // The common form on a dual-stack socket, without parsing.
  const mapped = MAPPED_IPV4.exec(ip)?.[1];
  if (mapped !== undefined && isIPv4(mapped)) return mapped;
  const groups = ipv6Groups(ip);
  if (!groups) return ip;
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  return `${groups.slice(0, 4).map((group) => group.toString(16)).join(':')}::/64`;
}
