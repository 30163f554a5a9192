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
