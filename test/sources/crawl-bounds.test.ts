import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { OutboundPolicy } from '../../src/lib/outbound-fetch.js';
import { crawlRequestLimit, crawlSite, emptyCrawlReport, type CrawledPage, type CrawlLimits, type CrawlReport } from '../../src/modules/sources/crawler.js';
import { Frontier, pageKey } from '../../src/modules/sources/frontier.js';
import { createTestApp, type TestApp, type Tenant } from '../helpers/app.js';
import { makeChatbot } from '../helpers/factories.js';
import { htmlPage, type SitePage } from '../helpers/site-server.js';
import { sitesClosedAfterEach, waitForStatus } from './support.js';

// A crawl is bounded whatever the site does: in requests (every fetch counts against its page limit), in
// time (its deadline), and in the URLs it queues.
const policy: OutboundPolicy = { allowPrivateHosts: true, timeoutMs: 5_000, maxResponseBytes: 8 * 1024 * 1024, maxRedirects: 3, userAgent: 'TestBot/1.0 (+https://example.com/bot)' };
const limits: CrawlLimits = { maxPages: 5, maxDepth: 3, include: [], exclude: [] };

const site = sitesClosedAfterEach();

async function crawl(start: string, overrides: Partial<CrawlLimits> = {}, with_: OutboundPolicy = policy): Promise<{ pages: CrawledPage[]; report: CrawlReport }> {
  const report = emptyCrawlReport();
  const pages: CrawledPage[] = [];
  for await (const page of crawlSite(start, { ...limits, ...overrides }, with_, report)) pages.push(page);
  return { pages, report };
}

const outcome = (page: CrawledPage) => [new URL(page.url).pathname, page.ok ? 'ok' : page.error];

describe('a crawl bounded in requests', () => {
  it('2,000 links redirecting to a page already read make at most 2 × max_pages + 3 requests, and the crawl says why it stopped', async () => {
    const redirects: Record<string, SitePage> = {};
    for (let i = 0; i < 2000; i++) redirects[`/r/${i}`] = { status: 301, headers: { location: '/target' } };
    const links = Object.keys(redirects);
    const s = await site({ pages: { '/': htmlPage('Home', 'Many ways to one page', links), '/target': htmlPage('Target', 'The one page'), ...redirects } });

    const { pages, report } = await crawl(`${s.url}/`);
    expect(crawlRequestLimit(5)).toBe(13);
    expect(s.requests.length).toBeLessThanOrEqual(13);
    expect(report.requests).toBe(s.requests.length);
    expect(pages.map(outcome)).toEqual([['/', 'ok'], ['/target', 'ok']]);
    expect(report.stopped).toBe('The crawl stopped after 13 requests, its limit for 5 pages (redirects and failed fetches count too); the pages read until then are kept.');
  });

  it('counts robots.txt, sitemap and failed fetches, and reads no body of an error answer or a redirect', async () => {
    // The stalled bodies never end: a crawl that read them would wait for its fetch timeout and fail the page.
    const s = await site({
      pages: {
        '/': htmlPage('Home', 'Start', ['/missing', '/moved', '/broken', '/a', '/b', '/c']),
        '/missing': { status: 404, body: '<html>', stallBody: true },
        '/moved': { status: 302, headers: { location: '/a' }, body: '<html>', stallBody: true },
        '/broken': { status: 500, body: '<html>', stallBody: true },
        '/a': htmlPage('A', 'a'),
        '/b': htmlPage('B', 'b'),
        '/c': htmlPage('C', 'c'),
      },
    });
    const { pages, report } = await crawl(`${s.url}/`, { maxPages: 3 });
    expect(pages.map(outcome)).toEqual([
      ['/', 'ok'],
      ['/missing', 'the page answered 404 Not Found'],
      ['/a', 'ok'],
    ]);
    expect(s.requests).toEqual(['/robots.txt', '/', '/sitemap.xml', '/missing', '/moved', '/a']);
    expect(report).toMatchObject({ requests: 6, stopped: null });
  });
});

describe('the frontier of a crawl', () => {
  it('normalises URLs before queueing (fragment, default port, trailing slash, empty query) and never holds more than its capacity', () => {
    expect(new Set(['http://Example.com:80/a/#top', 'http://example.com/a', 'http://example.com/a?', 'http://example.com/a//'].map((href) => pageKey(new URL(href))))).toEqual(new Set(['http://example.com/a']));
    expect(pageKey(new URL('https://example.com:443/'))).toBe(pageKey(new URL('https://example.com')));
    expect(pageKey(new URL('http://example.com:8080/a'))).not.toBe(pageKey(new URL('http://example.com/a')));

    let capacity = 3;
    const frontier = new Frontier(() => capacity);
    expect(frontier.push(new URL('http://example.com/a'), 1)).toBe(true);
    expect(frontier.push(new URL('http://example.com:80/a/#x'), 1)).toBe(false);
    for (let i = 0; i < 100; i++) frontier.push(new URL(`http://example.com/p/${i}`), 1);
    expect(frontier.size).toBe(3);
    expect(frontier.shift()?.url.pathname).toBe('/a');
    capacity = 1;
    expect(frontier.push(new URL('http://example.com/late'), 1)).toBe(false);
    expect([frontier.shift()?.url.pathname, frontier.shift()?.url.pathname, frontier.shift()]).toEqual(['/p/0', '/p/1', undefined]);
    expect(frontier.largest).toBe(3);
  });

  it('a page with 100,000 links queues no more URLs than the crawl can still fetch, and the crawl ends', async () => {
    const links = Array.from({ length: 100_000 }, (_, i) => `/p/${i}`);
    const s = await site({ pages: { '/': htmlPage('Home', 'A very long index', links) } });
    const { pages, report } = await crawl(`${s.url}/`);
    expect(report.largestFrontier).toBeGreaterThan(0);
    expect(report.largestFrontier).toBeLessThanOrEqual(crawlRequestLimit(5));
    expect(pages.map(outcome)).toEqual([['/', 'ok'], ...links.slice(0, 4).map((path) => [path, 'the page answered 404 Not Found'])]);
    expect(s.requests.length).toBeLessThanOrEqual(crawlRequestLimit(5));
  }, 60_000);

  it('holds at most 10,000 URLs whatever the page limit, and a crawl past its time limit stops and says so', async () => {
    const links = Array.from({ length: 100_000 }, (_, i) => `/p/${i}`);
    const s = await site({ pages: { '/': htmlPage('Home', 'A very long index', links) } });
    const { pages, report } = await crawl(`${s.url}/`, { maxPages: 100_000, maxMs: 3_000 });
    expect(report.largestFrontier).toBe(10_000);
    expect(report.stopped).toBe('The crawl stopped at its time limit of 3 seconds; the pages read until then are kept.');
    expect(pages[0]).toMatchObject({ url: `${s.url}/`, ok: true });
    expect(pages.length).toBeLessThan(10_000);
  }, 60_000);
});

describe('the sitemaps of a crawl', () => {
  it('an index naming 150,000 sitemaps costs its parse and a few requests, within the crawl budget', async () => {
    const entries = Array.from({ length: 150_000 }, (_, i) => `<sitemap><loc>{origin}/s/${i}</loc></sitemap>`).join('');
    const s = await site({
      sitemap: `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${entries}</sitemapindex>`,
      pages: { '/': htmlPage('Home', 'Start') },
    });
    const { pages, report } = await crawl(`${s.url}/`, {}, { ...policy, maxResponseBytes: 16 * 1024 * 1024 });
    expect(pages.map(outcome)).toEqual([['/', 'ok']]);
    expect(s.requests.slice(0, 4)).toEqual(['/robots.txt', '/', '/sitemap.xml', '/s/0']);
    expect(s.requests.length).toBeLessThanOrEqual(crawlRequestLimit(5));
    expect(report.requests).toBe(s.requests.length);
  }, 60_000);
});

describe('a website source past its crawl time limit', () => {
  let t: TestApp;
  let tenant: Tenant;
  let bot: { id: string };

  beforeAll(async () => {
    const defaults = loadConfig({});
    // A short time limit, and a fetch timeout far past it: only the crawl's deadline can end a hanging page.
    // Long enough for the first, complete crawl of four pages on a loaded machine (each page's links and
    // text are read in the parse sandbox, whose first child starts in seconds under tsx).
    t = await createTestApp({ sources: { ...defaults.sources, allowPrivateHosts: true, fetchTimeoutMs: 60_000, maxCrawlMs: 10_000 }, runtime: { ...defaults.runtime, pollIntervalMs: 50 } });
    tenant = await t.tenant();
    bot = await makeChatbot(tenant);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('stops fetching, keeps what it read (and the pages it did not reach), and the source says why', async () => {
    const s = await site({
      pages: {
        '/': htmlPage('Home', 'The lamp shop.', ['/a', '/slow', '/after']),
        '/a': htmlPage('Lamps', 'Brass lamps.'),
        '/slow': htmlPage('Slow', 'Shades in linen.'),
        '/after': htmlPage('After', 'Bulbs of every kind.'),
      },
    });
    const created = await tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources`, { type: 'website', url: `${s.url}/` });
    expect(created.statusCode, created.body).toBe(201);
    const sourceId = created.json().id as string;
    expect(await waitForStatus(tenant, bot.id, sourceId, ['ready', 'failed'])).toMatchObject({ status: 'ready', error: null, stats: { documents: 4 } });

    s.setPage('/a', htmlPage('Lamps', 'Copper lamps now.'));
    s.setPage('/slow', { hang: true });
    s.requests.length = 0;
    expect((await tenant.request('POST', `/api/v1/chatbots/${bot.id}/sources/${sourceId}/sync`)).statusCode).toBe(202);
    const settled = await waitForStatus(tenant, bot.id, sourceId, ['ready', 'failed'], 30_000);
    expect(settled).toMatchObject({
      status: 'ready',
      error: 'The crawl stopped at its time limit of 10 seconds; the pages read until then are kept.',
      stats: { documents: 4, failed_documents: 0 },
    });
    expect(s.requests).not.toContain('/after');
    const documents = (await tenant.request('GET', `/api/v1/chatbots/${bot.id}/sources/${sourceId}/documents?limit=100`)).json().data as Array<{ url: string; status: string }>;
    expect(documents.map((d) => [new URL(d.url).pathname, d.status]).sort()).toEqual([['/', 'ready'], ['/a', 'ready'], ['/after', 'ready'], ['/slow', 'ready']]);
    const hit = (await tenant.request('GET', `/api/v1/chatbots/${bot.id}/knowledge/search?q=${encodeURIComponent('copper lamps')}`)).json().data[0];
    expect(hit.content).toContain('Copper lamps now.');
  }, 60_000);
});
