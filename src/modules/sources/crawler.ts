import { STATUS_CODES } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import picomatch from 'picomatch';
import robotsParserModule from 'robots-parser';
import { OutboundError, safeFetch, type OutboundPolicy } from '../../lib/outbound-fetch.js';
import { parseLink, pageLinks, type PageLinks } from './parsing/links.js';
import { collectSitemapUrls } from './sitemap.js';

/** How far a website crawl goes. `include`/`exclude` are path globs (picomatch); exclude wins, empty include = all. */
export interface CrawlLimits { maxPages: number; maxDepth: number; include: string[]; exclude: string[] }

/** Reads an HTML page's links and canonical URL: the parse sandbox's, or in this process (pageLinks) for trusted pages. */
export type LinkReader = (body: Uint8Array, contentType: string | null, url: string) => Promise<PageLinks>;

/**
 * One fetched page: its body as served (HTML, or a PDF the caller may ingest), or why it failed; `found`:
 * the pages the crawl has found so far, up to its page limit.
 */
export type CrawledPage =
  | { url: string; depth: number; found: number; ok: true; contentType: string | null; body: Uint8Array }
  | { url: string; depth: number; found: number; ok: false; error: string };

const HTML = /^\s*(text\/html|application\/xhtml\+xml)/i;
const PAGE_ACCEPT = 'text/html,application/xhtml+xml,application/pdf;q=0.9,*/*;q=0.8';
// Links to these are assets, never knowledge: not worth a request.
const ASSET = /\.(png|jpe?g|gif|webp|avif|svg|ico|bmp|tiff?|css|js|mjs|map|json|woff2?|ttf|otf|eot|mp[34]|m4a|wav|ogg|webm|mov|avi|zip|gz|tgz|rar|7z|exe|dmg|iso|apk)$/i;
// robots-parser is CommonJS (module.exports = the function) while its types declare an ES default export.
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;

/** Politeness: a robots.txt Crawl-delay is honoured up to this many seconds between requests. */
const MAX_CRAWL_DELAY_S = 2;

/** The identity of a page for de-duplication: `/a` and `/a/` are one page; an empty query is no query. */
function pageKey(url: URL): string {
  const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname;
  return `${url.origin}${path}${url.search === '?' ? '' : url.search}`;
}

function safeDecode(path: string): string {
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}

/** The glob filter on a URL's path; globs are written with or without the leading slash, `*.pdf` matches any folder. */
function pathFilter(include: string[], exclude: string[]): (url: URL) => boolean {
  const compile = (globs: string[]) => {
    // `basename` only for globs without a slash: picomatch's option stops `a/**` matching `a/b`.
    const matchers = globs
      .map((glob) => glob.trim().replace(/^\/+/, ''))
      .filter(Boolean)
      .map((glob) => picomatch(glob, { dot: true, basename: !glob.includes('/') }));
    return matchers.length > 0 ? (path: string) => matchers.some((matches) => matches(path)) : null;
  };
  const included = compile(include);
  const excluded = compile(exclude);
  return (url) => {
    const path = safeDecode(url.pathname).replace(/^\/+/, '');
    if (excluded?.(path)) return false;
    return included === null || included(path);
  };
}

interface SiteRules { allowed(url: URL): boolean; sitemaps: string[]; delayMs: number }

/** The site's robots.txt rules for our user agent; a missing or unreadable robots.txt allows everything. */
async function loadRobots(origin: string, policy: OutboundPolicy): Promise<SiteRules> {
  const robotsUrl = `${origin}/robots.txt`;
  let text = '';
  try {
    const response = await safeFetch(robotsUrl, policy, { accept: 'text/plain,*/*;q=0.1' });
    if (response.status >= 200 && response.status <= 299) text = Buffer.from(response.body).toString('utf8');
  } catch {
    // Unreachable robots.txt: treated as absent (the pages themselves will report their own errors).
  }
  const robots = robotsParser(robotsUrl, text);
  const agent = policy.userAgent.split(/[/\s]/)[0] ?? policy.userAgent;
  return {
    allowed: (url) => robots.isAllowed(url.href, agent) !== false,
    sitemaps: robots.getSitemaps(),
    delayMs: Math.min(robots.getCrawlDelay(agent) ?? 0, MAX_CRAWL_DELAY_S) * 1000,
  };
}

/** The reason a page failed, readable by the user. */
function failure(error: unknown): string {
  if (error instanceof OutboundError) return error.message;
  return `could not fetch the page: ${error instanceof Error ? error.message : String(error)}`;
}

/**
 * Same-origin crawl from startUrl: robots.txt honoured (robots-parser, our user agent), sitemap.xml (and
 * sitemap indexes; also Sitemap: lines of robots.txt) seeds URLs, links from pages (<a href> via linkedom),
 * URL normalisation (fragment dropped, trailing-slash/duplicate handling), include/exclude globs on the path,
 * depth and page limits (maxPages: 1 = the start page only). Yields each page as fetched (a failed page is
 * yielded with ok:false and never stops the crawl). Non-HTML responses are yielded as they are.
 *
 * The start page is always fetched (the user named it), whatever the globs say; pages are fetched one at a
 * time, breadth first: the start page, then the sitemap's pages (depth 1; read once the start page answered,
 * even with an error status), then the links found.
 */
export async function* crawlSite(
  startUrl: string,
  limits: CrawlLimits,
  policy: OutboundPolicy,
  readLinks: LinkReader = async (body, contentType, url) => pageLinks(body, contentType, url),
): AsyncGenerator<CrawledPage> {
  const start = parseLink(startUrl.trim());
  if (!start) throw new OutboundError('refused: only http and https URLs are crawled');
  let origin = start.origin;
  let rules = await loadRobots(origin, policy);
  if (!rules.allowed(start)) {
    yield { url: start.href, depth: 0, found: 1, ok: false, error: 'disallowed by robots.txt' };
    return;
  }
  const wanted = pathFilter(limits.include, limits.exclude);
  const seen = new Set<string>([pageKey(start)]);
  const fetchedKeys = new Set<string>();
  const queue: Array<{ url: URL; depth: number }> = [{ url: start, depth: 0 }];
  const admit = (url: URL, depth: number): boolean => {
    const key = pageKey(url);
    if (url.origin !== origin || depth > limits.maxDepth || seen.has(key)) return false;
    if (ASSET.test(url.pathname) || !wanted(url) || !rules.allowed(url)) return false;
    seen.add(key);
    queue.push({ url, depth });
    return true;
  };

  let yielded = 0;
  // Pages found so far, as far as the page limit goes: the progress a sync shows.
  const found = () => Math.min(queue.length, limits.maxPages);
  for (let next = 0; next < queue.length && yielded < limits.maxPages; next++) {
    const { url, depth } = queue[next] as { url: URL; depth: number };
    if (next > 0 && rules.delayMs > 0) await sleep(rules.delayMs);
    let response;
    try {
      response = await safeFetch(url.href, policy, { accept: PAGE_ACCEPT });
    } catch (error) {
      yielded++;
      yield { url: url.href, depth, found: found(), ok: false, error: failure(error) };
      continue;
    }
    const final = new URL(response.url);
    if (depth === 0 && final.origin !== origin) {
      // The start page moved (http → https, www.): the site is where it landed.
      origin = final.origin;
      rules = await loadRobots(origin, policy);
    }
    if (final.origin !== origin) {
      yielded++;
      yield { url: url.href, depth, found: found(), ok: false, error: `redirected off the site, to ${final.href}` };
      continue;
    }
    const finalKey = pageKey(final);
    if (depth > 0 && finalKey !== pageKey(url) && (fetchedKeys.has(finalKey) || !wanted(final) || !rules.allowed(final))) continue;
    seen.add(finalKey);
    fetchedKeys.add(finalKey);
    if (depth === 0 && limits.maxPages > 1 && limits.maxDepth >= 1) {
      // The site answered (even a 404 start page): its sitemap seeds depth 1, ahead of the start page's links.
      await collectSitemapUrls(origin, rules.sitemaps, policy, (loc) => {
        const link = parseLink(loc, final);
        return link !== null && admit(link, 1);
      }, limits.maxPages - 1);
    }
    if (response.status < 200 || response.status > 299) {
      yielded++;
      yield { url: final.href, depth, found: found(), ok: false, error: `the page answered ${response.status} ${STATUS_CODES[response.status] ?? ''}`.trim() };
      continue;
    }

    const page = HTML.test(response.contentType ?? '') ? await readLinks(response.body, response.contentType, final.href).catch(() => null) : null;
    // A canonical link is honoured only between variants of one path (?ref=, ?sort=): sites that point every
    // page's canonical at the home page are common enough that trusting it further would drop whole sites.
    const canonical = page?.canonical ? new URL(page.canonical) : null;
    if (canonical && canonical.origin === origin && canonical.pathname === final.pathname && pageKey(canonical) !== finalKey) {
      if (fetchedKeys.has(pageKey(canonical))) continue;
      seen.add(pageKey(canonical));
    }
    if (page && depth < limits.maxDepth) for (const link of page.links) admit(new URL(link), depth + 1);
    yielded++;
    yield { url: final.href, depth, found: found(), ok: true, contentType: response.contentType, body: response.body };
  }
}
