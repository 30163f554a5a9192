import { STATUS_CODES } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import picomatch from 'picomatch';
import robotsParserModule from 'robots-parser';
import { FetchBudget, FetchBudgetSpent, OutboundError, safeFetch, type OutboundPolicy } from '../../lib/outbound-fetch.js';
import { Frontier, parseLink, pageKey } from './frontier.js';
import { pageLinks, type PageLinks } from './parsing/links.js';
import { collectSitemapUrls } from './sitemap.js';

/**
 * How far a website crawl goes. `include`/`exclude` are path globs (picomatch); exclude wins, empty include = all.
 * `maxMs`: the longest the crawl may run (no fetch starts past it, one under way is cut); no limit when absent.
 */
export interface CrawlLimits { maxPages: number; maxDepth: number; include: string[]; exclude: string[]; maxMs?: number }

/** What a crawl tells besides its pages; complete once the crawl has ended. */
export interface CrawlReport {
  /** Requests sent: every redirect hop, failure, robots.txt and sitemap fetch included. */
  requests: number;
  /** The most URLs queued (found, not yet fetched) at once. */
  largestFrontier: number;
  /** Why the crawl stopped with pages still queued (its time or request limit), readable by the user; null otherwise. */
  stopped: string | null;
}

/** Reads an HTML page's links and canonical URL: the parse sandbox's, or in this process (pageLinks) for trusted pages. */
export type LinkReader = (body: Uint8Array, contentType: string | null, url: string) => Promise<PageLinks>;

/** A report for crawlSite to fill in. */
export function emptyCrawlReport(): CrawlReport {
  return { requests: 0, largestFrontier: 0, stopped: null };
}

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
/**
 * Requests a crawl may send per page of its limit, and besides (robots.txt, again if the start page moves to
 * another origin, and sitemap.xml): redirect hops, failures and pages met twice all count, so a site answering
 * every link with a redirect to a page already read cannot make a crawl of 5 pages send thousands.
 */
const REQUESTS_PER_PAGE = 2;
const REQUESTS_BESIDES_PAGES = 3;
/** The most URLs queued at once, whatever the page limit (a queued URL costs memory until fetched). */
const MAX_FRONTIER = 10_000;

/** The request budget of a crawl of at most `maxPages` pages. */
export function crawlRequestLimit(maxPages: number): number {
  return maxPages * REQUESTS_PER_PAGE + REQUESTS_BESIDES_PAGES;
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

function duration(ms: number): string {
  const minutes = ms / 60_000;
  if (Number.isInteger(minutes)) return minutes === 1 ? '1 minute' : `${minutes} minutes`;
  return `${Number((ms / 1000).toFixed(1))} seconds`;
}

/** Why a crawl stopped before its end, readable by the user. */
function stopReason(budget: FetchBudget, maxPages: number): string {
  const cause = budget.spent === 'time'
    ? `at its time limit of ${duration(budget.maxMs)}`
    : `after ${budget.maxRequests} requests, its limit for ${maxPages} pages (redirects and failed fetches count too)`;
  return `The crawl stopped ${cause}; the pages read until then are kept.`;
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
 *
 * Bounded whatever the site does: every request counts against crawlRequestLimit(maxPages), the crawl ends
 * at `maxMs`, the queue of found URLs never outgrows the fetches left, and the body of an error answer or a
 * redirect is not read. A crawl cut short by its time or request limit says why in `report.stopped`.
 */
export async function* crawlSite(
  startUrl: string,
  limits: CrawlLimits,
  policy: OutboundPolicy,
  report: CrawlReport = emptyCrawlReport(),
  readLinks: LinkReader = async (body, contentType, url) => pageLinks(body, contentType, url),
): AsyncGenerator<CrawledPage> {
  const start = parseLink(startUrl.trim());
  if (!start) throw new OutboundError('refused: only http and https URLs are crawled');
  const budget = new FetchBudget(crawlRequestLimit(limits.maxPages), limits.maxMs);
  const crawlPolicy: OutboundPolicy = { ...policy, budget, skipErrorBodies: true };
  const frontier = new Frontier(() => Math.min(MAX_FRONTIER, budget.requestsLeft));
  try {
    yield* crawlPages(start, limits, crawlPolicy, { budget, frontier, report, readLinks });
  } finally {
    report.requests = budget.requests;
    report.largestFrontier = frontier.largest;
  }
}

/** What one crawl keeps while it runs: its budget, its queue, its report, and how it reads a page's links. */
interface CrawlState { budget: FetchBudget; frontier: Frontier; report: CrawlReport; readLinks: LinkReader }

async function* crawlPages(start: URL, limits: CrawlLimits, policy: OutboundPolicy, { budget, frontier, report, readLinks }: CrawlState): AsyncGenerator<CrawledPage> {
  let origin = start.origin;
  let rules = await loadRobots(origin, policy);
  if (!rules.allowed(start)) {
    yield { url: start.href, depth: 0, found: 1, ok: false, error: 'disallowed by robots.txt' };
    return;
  }
  const wanted = pathFilter(limits.include, limits.exclude);
  const fetchedKeys = new Set<string>();
  frontier.push(start, 0);
  const admit = (url: URL, depth: number): boolean => {
    if (url.origin !== origin || depth > limits.maxDepth || frontier.has(url)) return false;
    if (ASSET.test(url.pathname) || !wanted(url) || !rules.allowed(url)) return false;
    return frontier.push(url, depth);
  };

  let yielded = 0;
  // Pages found so far, as far as the page limit goes: the progress a sync shows.
  const found = () => Math.min(frontier.queued, limits.maxPages);
  for (let queued = frontier.shift(); queued && yielded < limits.maxPages; queued = frontier.shift()) {
    const { url, depth } = queued;
    if (depth > 0 && rules.delayMs > 0) await sleep(Math.min(rules.delayMs, budget.msLeft));
    if (budget.spent) {
      report.stopped = stopReason(budget, limits.maxPages);
      return;
    }
    let response;
    try {
      response = await safeFetch(url.href, policy, { accept: PAGE_ACCEPT });
    } catch (error) {
      if (error instanceof FetchBudgetSpent) {
        // Not the page's fault: the crawl is out of time or requests, and this page was not read.
        report.stopped = stopReason(budget, limits.maxPages);
        return;
      }
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
    frontier.mark(final);
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

    // A page whose links cannot be read (the sandbox's limits) is still yielded: its own parse says why it fails.
    const page = HTML.test(response.contentType ?? '') ? await readLinks(response.body, response.contentType, final.href).catch(() => null) : null;
    // A canonical link is honoured only between variants of one path (?ref=, ?sort=): sites that point every
    // page's canonical at the home page are common enough that trusting it further would drop whole sites.
    const canonical = page?.canonical ? new URL(page.canonical) : null;
    if (canonical && canonical.origin === origin && canonical.pathname === final.pathname && pageKey(canonical) !== finalKey) {
      if (fetchedKeys.has(pageKey(canonical))) continue;
      frontier.mark(canonical);
    }
    if (page && depth < limits.maxDepth) {
      for (const link of page.links) {
        if (frontier.full) break;
        admit(new URL(link), depth + 1);
      }
    }
    yielded++;
    yield { url: final.href, depth, found: found(), ok: true, contentType: response.contentType, body: response.body };
  }
}
