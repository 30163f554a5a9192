import { gunzipSync } from 'node:zlib';
import { DOMParser } from 'linkedom';
import { safeFetch, type OutboundPolicy } from '../../lib/outbound-fetch.js';

/** Sitemap files read per crawl (an index and the sitemaps it names), so a hostile index cannot fan out. */
const MAX_SITEMAP_FILES = 20;

/** The locations a sitemap lists: pages (`<urlset>`) or further sitemaps (`<sitemapindex>`). */
export function parseSitemap(xml: string): { pages: string[]; sitemaps: string[] } {
  const document = new DOMParser().parseFromString(xml, 'text/xml');
  const pages: string[] = [];
  const sitemaps: string[] = [];
  for (const loc of Array.from(document.getElementsByTagName('loc'))) {
    const text = loc.textContent?.trim();
    const parent = loc.parentNode as { localName?: string } | null;
    if (!text) continue;
    if (parent?.localName === 'url') pages.push(text);
    else if (parent?.localName === 'sitemap') sitemaps.push(text);
  }
  return { pages, sitemaps };
}

function sitemapText(body: Uint8Array, maxBytes: number): string {
  // sitemap.xml.gz is usually served as a gzip file, not with Content-Encoding.
  const gzipped = body[0] === 0x1f && body[1] === 0x8b;
  return Buffer.from(gzipped ? gunzipSync(body, { maxOutputLength: maxBytes }) : body).toString('utf8');
}

/**
 * Walks the site's sitemaps (those robots.txt names, else /sitemap.xml) and offers each page URL to `offer`,
 * which returns true when it took the URL; stops once `wanted` URLs were taken, or when the policy's budget
 * is spent (each sitemap file is a request of the crawl). Sitemaps are optional: one that is missing, off the
 * site or unreadable is skipped.
 */
export async function collectSitemapUrls(
  origin: string,
  listed: string[],
  policy: OutboundPolicy,
  offer: (url: string) => boolean,
  wanted: number,
): Promise<void> {
  const pending = listed.length > 0 ? [...listed] : [`${origin}/sitemap.xml`];
  const visited = new Set<string>();
  let taken = 0;
  while (pending.length > 0 && visited.size < MAX_SITEMAP_FILES && taken < wanted && !policy.budget?.spent) {
    const location = pending.shift() as string;
    let url: URL;
    try {
      url = new URL(location);
    } catch {
      continue;
    }
    if (url.origin !== origin || visited.has(url.href)) continue;
    visited.add(url.href);
    let parsed: { pages: string[]; sitemaps: string[] };
    try {
      const response = await safeFetch(url.href, policy, { accept: 'application/xml,text/xml;q=0.9,*/*;q=0.1' });
      if (response.status < 200 || response.status > 299) continue;
      parsed = parseSitemap(sitemapText(response.body, policy.maxResponseBytes));
    } catch {
      continue;
    }
    // Only as many as may still be read: an index naming 100,000 sitemaps queues a handful.
    pending.push(...parsed.sitemaps.slice(0, Math.max(0, MAX_SITEMAP_FILES - visited.size - pending.length)));
    for (const page of parsed.pages) {
      if (offer(page)) taken++;
      if (taken >= wanted) break;
    }
  }
}
