import { describe, expect, it } from 'vitest';
import type { OutboundPolicy } from '../../src/lib/outbound-fetch.js';
import { crawlSite, type CrawledPage, type CrawlLimits } from '../../src/modules/sources/crawler.js';
import { htmlPage, sitemapXml, type SiteOptions } from '../helpers/site-server.js';
import { sitesClosedAfterEach } from './support.js';

// The test sites listen on 127.0.0.1, so the crawls allow private hosts; the refusal of private addresses
// on redirects is tested with `allowedHosts`, which exempts the test site's own host:port only.
const policy: OutboundPolicy = { allowPrivateHosts: true, timeoutMs: 5_000, maxResponseBytes: 1024 * 1024, maxRedirects: 3, userAgent: 'TestBot/1.0 (+https://example.com/bot)' };
const wide: CrawlLimits = { maxPages: 100, maxDepth: 10, include: [], exclude: [] };

const site = sitesClosedAfterEach();

async function crawl(start: string, limits: Partial<CrawlLimits> = {}, with_: OutboundPolicy = policy): Promise<CrawledPage[]> {
  const pages: CrawledPage[] = [];
  for await (const page of crawlSite(start, { ...wide, ...limits }, with_)) pages.push(page);
  return pages;
}

/** Path → depth of the pages fetched successfully. */
function fetched(pages: CrawledPage[]): Record<string, number> {
  return Object.fromEntries(pages.filter((page) => page.ok).map((page) => [new URL(page.url).pathname + new URL(page.url).search, page.depth]));
}

const shop: SiteOptions = {
  robots: 'User-agent: *\nDisallow: /private\n\nUser-agent: OtherBot\nDisallow: /\n',
  sitemap: sitemapXml(['/orphan', '/about', 'http://elsewhere.example/page']),
  pages: {
    '/': htmlPage('Home', 'Welcome', ['/about', '/about#team', '/about/', 'products', 'http://elsewhere.example/x', 'mailto:hi@example.com', '/private/secret', '/logo.png', '/guide.pdf']),
    '/about': htmlPage('About', 'About us', ['/team', '/']),
    '/team': htmlPage('Team', 'Our team', ['/deep']),
    '/deep': htmlPage('Deep', 'Deep down', []),
    '/products': htmlPage('Products', 'What we sell', ['/products/a', '/products/b?ref=1', '/products/b?ref=1#x']),
    '/products/a': htmlPage('A', 'Product A'),
    '/products/b': htmlPage('B', 'Product B'),
    '/orphan': htmlPage('Orphan', 'Only in the sitemap'),
    '/private/secret': htmlPage('Secret', 'Not for robots'),
    '/guide.pdf': { headers: { 'content-type': 'application/pdf' }, body: '%PDF-1.4 fake' },
  },
};

describe('crawlSite', () => {
  it('follows same-origin links, seeds from sitemap.xml, honours robots.txt and fetches each normalised URL once', async () => {
    const s = await site(shop);
    const pages = await crawl(`${s.url}/`);
    expect(pages[0]).toMatchObject({ url: `${s.url}/`, depth: 0, ok: true });
    expect(fetched(pages)).toEqual({
      '/': 0, '/orphan': 1, '/about': 1, '/products': 1, '/guide.pdf': 1, '/team': 2, '/products/a': 2, '/products/b?ref=1': 2, '/deep': 3,
    });
    expect(pages.every((page) => page.ok)).toBe(true);
    expect(s.requests.filter((path) => path.startsWith('/private'))).toEqual([]);
    expect(s.requests.filter((path) => path === '/about' || path === '/about/')).toEqual(['/about']);
    expect(s.requests).not.toContain('/logo.png');
    expect(s.requests.slice(0, 3)).toEqual(['/robots.txt', '/', '/sitemap.xml']);
    const pdf = pages.find((page) => page.url.endsWith('/guide.pdf'));
    expect(pdf).toMatchObject({ ok: true, contentType: 'application/pdf' });
    expect(pdf?.ok && Buffer.from(pdf.body).toString()).toBe('%PDF-1.4 fake');
  });

  it('maxPages 1 fetches the start page only, without the sitemap; a larger cap stops at that many pages', async () => {
    const s = await site(shop);
    const one = await crawl(`${s.url}/products`, { maxPages: 1 });
    expect(one.map((page) => page.url)).toEqual([`${s.url}/products`]);
    expect(s.requests).not.toContain('/sitemap.xml');
    expect(s.requests.filter((path) => path !== '/robots.txt')).toEqual(['/products']);
    expect(await crawl(`${s.url}/`, { maxPages: 3 })).toHaveLength(3);
  });

  it('stops at maxDepth (start page 0, sitemap URLs and its links 1)', async () => {
    const s = await site(shop);
    expect(fetched(await crawl(`${s.url}/`, { maxDepth: 1 }))).toEqual({ '/': 0, '/orphan': 1, '/about': 1, '/products': 1, '/guide.pdf': 1 });
    expect(fetched(await crawl(`${s.url}/`, { maxDepth: 0 }))).toEqual({ '/': 0 });
  });

  it('applies include and exclude path globs to discovered URLs (exclude wins; empty include = all)', async () => {
    const s = await site(shop);
    const products = await crawl(`${s.url}/`, { include: ['/products/**'], exclude: ['/products/b'] });
    expect(fetched(products)).toEqual({ '/': 0, '/products': 1, '/products/a': 2 });
    const noProducts = await crawl(`${s.url}/`, { exclude: ['/products/**', '*.pdf'] });
    expect(Object.keys(fetched(noProducts)).sort()).toEqual(['/', '/about', '/deep', '/orphan', '/team']);
  });

  it('reads sitemap indexes and the Sitemap: lines of robots.txt', async () => {
    const s = await site({
      robots: 'User-agent: *\nDisallow:\nSitemap: {origin}/maps/index.xml\n',
      pages: {
        '/': htmlPage('Home', 'No links here'),
        '/maps/index.xml': {
          headers: { 'content-type': 'application/xml' },
          body: '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>{origin}/maps/pages.xml</loc></sitemap></sitemapindex>',
        },
        '/maps/pages.xml': { headers: { 'content-type': 'text/xml' }, body: sitemapXml(['/hidden', '/also-hidden']) },
        '/hidden': htmlPage('Hidden', 'Found through the sitemap index'),
        '/also-hidden': htmlPage('Also hidden', 'Also found'),
      },
    });
    expect(fetched(await crawl(`${s.url}/`))).toEqual({ '/': 0, '/hidden': 1, '/also-hidden': 1 });
    expect(s.requests).not.toContain('/sitemap.xml');
  });

  it('yields failed pages (404, never answering, redirect loop, too large) and goes on crawling', async () => {
    const s = await site({
      pages: {
        '/': htmlPage('Home', 'Start', ['/gone', '/hang', '/loop', '/huge', '/after']),
        '/hang': { hang: true },
        '/loop': { status: 302, headers: { location: '/loop2' } },
        '/loop2': { status: 302, headers: { location: '/loop' } },
        '/huge': htmlPage('Huge', 'x'.repeat(200_000)),
        '/after': htmlPage('After', 'Still crawled'),
      },
    });
    const started = Date.now();
    const pages = await crawl(`${s.url}/`, {}, { ...policy, timeoutMs: 500, maxRedirects: 2, maxResponseBytes: 64 * 1024 });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(pages.map((page) => [new URL(page.url).pathname, page.ok ? 'ok' : page.error])).toEqual([
      ['/', 'ok'],
      ['/gone', 'the page answered 404 Not Found'],
      ['/hang', 'no answer within 0.5 s'],
      ['/loop', 'more than 2 redirects'],
      ['/huge', 'the response is larger than 64 KB'],
      ['/after', 'ok'],
    ]);
  });

  it('refuses a page redirecting to a private address, and does not leave the site on redirects', async () => {
    const internal = await site({ pages: { '/': htmlPage('Internal', 'admin') } });
    const s = await site({
      pages: {
        '/': htmlPage('Home', 'Start', ['/leak', '/meta', '/moved']),
        '/leak': { status: 302, headers: { location: `${internal.url}/` } },
        '/meta': { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } },
        '/moved': { status: 301, headers: { location: '/about' } },
        '/about': htmlPage('About', 'Moved here', ['/moved']),
      },
    });
    const strict: OutboundPolicy = { ...policy, allowPrivateHosts: false, allowedHosts: [`127.0.0.1:${s.port}`] };
    const pages = await crawl(`${s.url}/`, {}, strict);
    expect(pages.map((page) => [new URL(page.url).pathname, page.ok ? 'ok' : page.error])).toEqual([
      ['/', 'ok'],
      ['/leak', 'refused: 127.0.0.1 is a loopback address'],
      ['/meta', 'refused: 169.254.169.254 is a link-local address'],
      ['/about', 'ok'],
    ]);
    expect(internal.requests).toEqual([]);
    const allowed = await crawl(`${s.url}/`, { maxPages: 2 });
    expect(allowed[1]).toEqual({ url: `${s.url}/leak`, depth: 1, found: 2, ok: false, error: `redirected off the site, to ${internal.url}/` });
  });

  it('skips a variant of a page (query) whose canonical URL was already crawled', async () => {
    const s = await site({
      pages: {
        '/': htmlPage('Home', 'Start', ['/article', '/article?print=1']),
        '/article': htmlPage('Article', 'The text'),
        '/article?print=1': '<html><head><link rel="canonical" href="/article"></head><body><p>The text</p></body></html>',
      },
    });
    expect(Object.keys(fetched(await crawl(`${s.url}/`)))).toEqual(['/', '/article']);
  });

  it('follows the start page to where it redirects (another origin) and crawls that site', async () => {
    const target = await site({
      sitemap: sitemapXml(['/listed']),
      pages: { '/': htmlPage('New home', 'Moved', ['/next']), '/next': htmlPage('Next', 'Linked'), '/listed': htmlPage('Listed', 'In the sitemap') },
    });
    const old = await site({ pages: { '/': { status: 301, headers: { location: `${target.url}/` } } } });
    const pages = await crawl(`${old.url}/`);
    expect(pages.map((page) => [page.url, page.depth])).toEqual([[`${target.url}/`, 0], [`${target.url}/listed`, 1], [`${target.url}/next`, 1]]);
    expect(target.requests).toContain('/robots.txt');
  });

  it('does not follow rel=nofollow links, nor any link of a page whose robots meta says nofollow', async () => {
    const s = await site({
      pages: {
        '/': `<html><body><a href="/kept">kept</a> <a rel="nofollow noopener" href="/skipped">skipped</a></body></html>`,
        '/kept': '<html><head><meta name="robots" content="noindex, nofollow"></head><body><a href="/beyond">beyond</a></body></html>',
        '/skipped': htmlPage('Skipped', 'no'),
        '/beyond': htmlPage('Beyond', 'no'),
      },
    });
    expect(Object.keys(fetched(await crawl(`${s.url}/`)))).toEqual(['/', '/kept']);
  });

  it('still seeds from the sitemap when the start page answers 404', async () => {
    const s = await site({ sitemap: sitemapXml(['/real']), pages: { '/real': htmlPage('Real', 'A page') } });
    const pages = await crawl(`${s.url}/typo`);
    expect(pages.map((page) => [new URL(page.url).pathname, page.ok ? 'ok' : page.error])).toEqual([
      ['/typo', 'the page answered 404 Not Found'],
      ['/real', 'ok'],
    ]);
  });

  it('refuses a start URL that is not http(s)', async () => {
    await expect(crawl('ftp://example.com/')).rejects.toThrow('refused: only http and https URLs are crawled');
    await expect(crawl('not a url')).rejects.toThrow('refused: only http and https URLs are crawled');
  });

  it('reports a start page that robots.txt disallows', async () => {
    const s = await site({ robots: 'User-agent: TestBot\nDisallow: /\n', pages: { '/': htmlPage('Home', 'Start', ['/a']) } });
    expect(await crawl(`${s.url}/`)).toEqual([{ url: `${s.url}/`, depth: 0, found: 1, ok: false, error: 'disallowed by robots.txt' }]);
    expect(s.requests).toEqual(['/robots.txt']);
  });
});
