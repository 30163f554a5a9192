import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OutboundError, safeFetch, type OutboundPolicy, type Resolver } from '../../src/lib/outbound-fetch.js';
import { startSite, type TestSite } from '../helpers/site-server.js';

// A resolver we control stands in for DNS (the name `site.test` exists nowhere else). Node's HTTP client
// keeps its own resolver, which this does not replace: a fetch of http://site.test/ can only reach the local
// site if safeFetch connects to the address it resolved and checked itself.
const answers: LookupAddress[][] = [];
const lookups: string[] = [];
const lookup: Resolver = (hostname, options, callback) => {
  if (hostname !== 'site.test') return dnsLookup(hostname, options, callback);
  lookups.push(hostname);
  const answer = answers.shift() ?? [];
  setImmediate(() => callback(null, answer));
};

const policy: OutboundPolicy = { lookup, allowPrivateHosts: false, timeoutMs: 1_500, maxResponseBytes: 1024 * 1024, maxRedirects: 3, userAgent: 'TestBot/1.0' };
let site: TestSite;

beforeAll(async () => {
  site = await startSite({ pages: { '/': { headers: { 'content-type': 'text/plain' }, body: 'reached the local site' } } });
});
afterAll(async () => site?.close());
beforeEach(() => {
  answers.length = 0;
  lookups.length = 0;
});

describe('safeFetch: DNS', () => {
  it('connects to the address it resolved (never resolving again at connect time)', async () => {
    answers.push([{ address: '127.0.0.1', family: 4 }]);
    const result = await safeFetch(`http://site.test:${site.port}/`, { ...policy, allowPrivateHosts: true });
    expect(Buffer.from(result.body).toString()).toBe('reached the local site');
    expect(lookups).toEqual(['site.test']);
  });

  it('refuses a name when any of its addresses is private', async () => {
    answers.push([{ address: '93.184.215.14', family: 4 }, { address: '10.0.0.7', family: 4 }]);
    const error = await safeFetch(`http://site.test:${site.port}/`, policy).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OutboundError);
    expect((error as Error).message).toBe('refused: site.test resolves to 10.0.0.7, a private address');
  });

  it('a rebinding answer (public at the check, loopback a moment later) never reaches the loopback host', async () => {
    const before = site.requests.length;
    answers.push([{ address: '93.184.215.14', family: 4 }], [{ address: '127.0.0.1', family: 4 }]);
    const error = await safeFetch(`http://site.test:${site.port}/`, policy).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OutboundError);
    expect(lookups).toEqual(['site.test']);
    expect(site.requests.length).toBe(before);
  });
});
