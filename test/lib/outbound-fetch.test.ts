import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FetchBudget, FetchBudgetSpent, OutboundError, safeFetch, type OutboundPolicy } from '../../src/lib/outbound-fetch.js';
import { startSite, type TestSite } from '../helpers/site-server.js';

const MB = 1024 * 1024;
const base: OutboundPolicy = { allowPrivateHosts: false, timeoutMs: 5_000, maxResponseBytes: MB, maxRedirects: 3, userAgent: 'TestBot/1.0' };

let site: TestSite;
let other: TestSite;
/** The test sites live on 127.0.0.1: `allowedHosts` exempts exactly the main site's host:port from the address check. */
let siteOnly: OutboundPolicy;

beforeAll(async () => {
  other = await startSite({ pages: { '/': 'internal admin page' } });
  site = await startSite({
    pages: {
      '/': '<p>hello</p>',
      '/plain': { headers: { 'content-type': 'text/plain' }, body: 'plain text' },
      '/to-other-port': { status: 302, headers: { location: `http://127.0.0.1:${other.port}/` } },
      '/to-localhost': { status: 301, headers: { location: `http://localhost:${other.port}/` } },
      '/to-ten': { status: 307, headers: { location: 'http://10.0.0.1/' } },
      '/to-metadata': { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } },
      '/to-file': { status: 302, headers: { location: 'file:///etc/passwd' } },
      '/hop1': { status: 302, headers: { location: '/hop2' } },
      '/hop2': { status: 302, headers: { location: '{origin}/hop3' } },
      '/hop3': { status: 302, headers: { location: 'plain' } },
      '/loop-a': { status: 302, headers: { location: '/loop-b' } },
      '/loop-b': { status: 302, headers: { location: '/loop-a' } },
      '/big': 'x'.repeat(3 * MB),
      '/big-chunked': { body: 'y'.repeat(3 * MB), headers: { 'transfer-encoding': 'chunked' } },
      '/bomb': { headers: { 'content-encoding': 'gzip' }, body: gzipSync(Buffer.alloc(20 * MB)) },
      '/gzip': { headers: { 'content-encoding': 'gzip', 'content-type': 'text/plain' }, body: gzipSync('compressed words') },
      '/hang': { hang: true },
      '/stall': { stallBody: true, body: '<html><body>' },
      '/missing-page-status': { status: 404, body: 'gone' },
      '/missing-stalled': { status: 404, stallBody: true, body: '<html>' },
    },
  });
  siteOnly = { ...base, allowedHosts: [`127.0.0.1:${site.port}`] };
});
afterAll(async () => {
  await site?.close();
  await other?.close();
});

async function failure(promise: Promise<unknown>): Promise<OutboundError> {
  const error = await promise.then(() => null, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(OutboundError);
  return error as OutboundError;
}

describe('safeFetch: addresses', () => {
  it('refuses loopback 127.0.0.1 when private hosts are not allowed, without connecting', async () => {
    const before = site.requests.length;
    const error = await failure(safeFetch(`${site.url}/`, base));
    expect(error.message).toBe('refused: 127.0.0.1 is a loopback address');
    expect(site.requests.length).toBe(before);
  });

  it('refuses a DNS name that resolves to a loopback address (localhost)', async () => {
    const before = site.requests.length;
    const error = await failure(safeFetch(`http://localhost:${site.port}/`, base));
    expect(error.message).toMatch(/^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address$/);
    expect(site.requests.length).toBe(before);
  });

  it.each([
    ['http://10.0.0.5/', '10.0.0.5 is a private address'],
    ['http://172.16.3.4/', '172.16.3.4 is a private address'],
    ['http://192.168.1.1:8080/', '192.168.1.1 is a private address'],
    ['http://100.64.0.1/', '100.64.0.1 is a private address'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a link-local address'],
    ['http://0.0.0.0/', '0.0.0.0 is an unspecified address'],
    ['http://224.0.0.1/', '224.0.0.1 is a multicast address'],
    ['http://[::1]/', '::1 is a loopback address'],
    ['http://[::]/', ':: is an unspecified address'],
    ['http://[fe80::1]/', 'fe80::1 is a link-local address'],
    ['http://[fd12:3456::1]/', 'fd12:3456::1 is a unique-local address'],
    ['http://[ff02::1]/', 'ff02::1 is a multicast address'],
    ['http://[::ffff:127.0.0.1]/', '::ffff:7f00:1 is a loopback address'],
    ['http://[::ffff:10.1.2.3]/', '::ffff:a01:203 is a private address'],
    ['http://[::ffff:169.254.169.254]/', '::ffff:a9fe:a9fe is a link-local address'],
    ['http://2130706433/', '127.0.0.1 is a loopback address'],
    ['http://0x7f.1/', '127.0.0.1 is a loopback address'],
    ['http://[64:ff9b::7f00:1]/', '64:ff9b::7f00:1 is a loopback address'],
    ['http://[2002:a00:1::1]/', '2002:a00:1::1 is a private address'],
  ])('refuses %s', async (url, reason) => {
    const error = await failure(safeFetch(url, { ...base, timeoutMs: 2_000 }));
    expect(error.message).toBe(`refused: ${reason}`);
  });

  it('fetches a private address when private hosts are allowed (tests, intranet deployments)', async () => {
    const result = await safeFetch(`${site.url}/plain`, { ...base, allowPrivateHosts: true });
    const { headers, ...rest } = result;
    expect(rest).toEqual({ url: `${site.url}/plain`, status: 200, contentType: 'text/plain', body: new Uint8Array(Buffer.from('plain text')) });
    // The response's headers come along (a webhook receiver's Retry-After is read from them).
    expect(headers['content-type']).toBe('text/plain');
    const named = await safeFetch(`http://localhost:${site.port}/plain`, { ...base, allowPrivateHosts: true });
    expect(Buffer.from(named.body).toString()).toBe('plain text');
  });

  it('sends the policy user agent and returns non-2xx statuses as they are', async () => {
    const result = await safeFetch(`${site.url}/missing-page-status`, siteOnly);
    expect(result.status).toBe(404);
    expect(Buffer.from(result.body).toString()).toBe('gone');
  });

  it('only fetches http and https URLs', async () => {
    expect((await failure(safeFetch('file:///etc/passwd', base))).message).toBe('refused: only http and https URLs are fetched (file:)');
    expect((await failure(safeFetch('ftp://example.com/x', base))).message).toBe('refused: only http and https URLs are fetched (ftp:)');
    expect((await failure(safeFetch('not a url', base))).message).toBe('refused: not a valid URL');
  });
});

describe('safeFetch: redirects', () => {
  it('follows redirects by hand (absolute, root-relative and relative Location) and reports the final URL', async () => {
    const result = await safeFetch(`${site.url}/hop1`, siteOnly);
    expect(result.url).toBe(`${site.url}/plain`);
    expect(Buffer.from(result.body).toString()).toBe('plain text');
  });

  it('refuses a public page redirecting to another private address, checking every target', async () => {
    const before = other.requests.length;
    expect((await failure(safeFetch(`${site.url}/to-other-port`, siteOnly))).message).toBe('refused: 127.0.0.1 is a loopback address');
    expect((await failure(safeFetch(`${site.url}/to-localhost`, siteOnly))).message).toMatch(/^refused: localhost resolves to (127\.0\.0\.1|::1), a loopback address$/);
    expect((await failure(safeFetch(`${site.url}/to-ten`, siteOnly))).message).toBe('refused: 10.0.0.1 is a private address');
    expect((await failure(safeFetch(`${site.url}/to-metadata`, siteOnly))).message).toBe('refused: 169.254.169.254 is a link-local address');
    expect((await failure(safeFetch(`${site.url}/to-file`, siteOnly))).message).toBe('refused: only http and https URLs are fetched (file:)');
    expect(other.requests.length).toBe(before);
  });

  it('follows a redirect to a private address when private hosts are allowed', async () => {
    const result = await safeFetch(`${site.url}/to-other-port`, { ...base, allowPrivateHosts: true });
    expect(result.url).toBe(`${other.url}/`);
    expect(Buffer.from(result.body).toString()).toBe('internal admin page');
  });

  it('stops after maxRedirects', async () => {
    expect((await failure(safeFetch(`${site.url}/loop-a`, siteOnly))).message).toBe('more than 3 redirects');
    expect((await failure(safeFetch(`${site.url}/hop1`, { ...siteOnly, maxRedirects: 2 }))).message).toBe('more than 2 redirects');
    await expect(safeFetch(`${site.url}/hop1`, { ...siteOnly, maxRedirects: 3 })).resolves.toMatchObject({ status: 200 });
  });
});

describe('safeFetch: size and time', () => {
  it('stops reading a body larger than maxResponseBytes (declared length, chunked, or decompressed)', async () => {
    expect((await failure(safeFetch(`${site.url}/big`, siteOnly))).message).toBe('the response is larger than 1 MB');
    expect((await failure(safeFetch(`${site.url}/big-chunked`, siteOnly))).message).toBe('the response is larger than 1 MB');
    expect((await failure(safeFetch(`${site.url}/bomb`, siteOnly))).message).toBe('the response is larger than 1 MB');
    const small = await safeFetch(`${site.url}/big`, { ...siteOnly, maxResponseBytes: 4 * MB });
    expect(small.body.byteLength).toBe(3 * MB);
  });

  it('decompresses gzip bodies', async () => {
    const result = await safeFetch(`${site.url}/gzip`, siteOnly);
    expect(Buffer.from(result.body).toString()).toBe('compressed words');
  });

  it('gives up on a server that never answers, or never finishes the body, within the total timeout', async () => {
    const started = Date.now();
    expect((await failure(safeFetch(`${site.url}/hang`, { ...siteOnly, timeoutMs: 500 }))).message).toBe('no answer within 0.5 s');
    expect((await failure(safeFetch(`${site.url}/stall`, { ...siteOnly, timeoutMs: 500 }))).message).toBe('no answer within 0.5 s');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('safeFetch: a budget shared by a series of fetches', () => {
  it('takes one request per hop and refuses to start past its requests, before sending', async () => {
    const budget = new FetchBudget(4);
    const before = site.requests.length;
    expect((await safeFetch(`${site.url}/hop1`, { ...siteOnly, budget })).url).toBe(`${site.url}/plain`);
    expect(budget.requests).toBe(4);
    expect(budget.spent).toBe('requests');
    const spent = await failure(safeFetch(`${site.url}/`, { ...siteOnly, budget }));
    expect(spent).toBeInstanceOf(FetchBudgetSpent);
    expect(spent.message).toBe('the limit of 4 requests is reached');
    expect(site.requests.slice(before)).toEqual(['/hop1', '/hop2', '/hop3', '/plain']);
  });

  it('cuts a fetch at the end of its time, with a budget error rather than the fetch timeout', async () => {
    const budget = new FetchBudget(100, 300);
    const cut = await failure(safeFetch(`${site.url}/hang`, { ...siteOnly, budget }));
    expect(cut).toBeInstanceOf(FetchBudgetSpent);
    expect(cut.message).toBe('the time limit is reached');
    expect(budget.spent).toBe('time');
  });

  it('does not read the body of an error answer when asked to (skipErrorBodies)', async () => {
    const result = await safeFetch(`${site.url}/missing-stalled`, { ...siteOnly, skipErrorBodies: true });
    expect(result).toMatchObject({ status: 404, body: new Uint8Array() });
    expect(Buffer.from((await safeFetch(`${site.url}/missing-page-status`, siteOnly)).body).toString()).toBe('gone');
  });
});
