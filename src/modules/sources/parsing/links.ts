import { parseHTML } from 'linkedom';
import { parseLink } from '../frontier.js';

/** The parts of linkedom's document read here (the DOM lib types are not part of this Node project). */
interface LinkElement { getAttribute(name: string): string | null }
interface LinkDocument {
  querySelector(selector: string): LinkElement | null;
  querySelectorAll(selector: string): Iterable<LinkElement>;
}

/** What a crawler follows from a page: its links (none when it says nofollow) and its canonical URL, as absolute URLs. */
export interface PageLinks { links: string[]; canonical: string | null }

/** The page's text in the charset its Content-Type names (UTF-8 otherwise). */
export function decodeHtml(body: Uint8Array, contentType: string | null): string {
  const charset = /charset=["']?([\w-]+)/i.exec(contentType ?? '')?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

/**
 * The links an HTML page offers to follow and its canonical URL (linkedom). Untrusted: the crawler asks
 * the parse sandbox (sandbox.ts), which runs this in a child process with memory and time limits.
 */
export function pageLinks(body: Uint8Array, contentType: string | null, pageUrl: string): PageLinks {
  const page = new URL(pageUrl);
  const document = parseHTML(decodeHtml(body, contentType)).document as unknown as LinkDocument;
  const base = parseLink(document.querySelector('base[href]')?.getAttribute('href') ?? '', page) ?? page;
  const canonicalHref = document.querySelector('link[rel~="canonical"][href]')?.getAttribute('href');
  const canonical = canonicalHref ? parseLink(canonicalHref, base)?.href ?? null : null;
  const metaRobots = document.querySelector('meta[name="robots" i]')?.getAttribute('content') ?? '';
  if (/nofollow|none/i.test(metaRobots)) return { links: [], canonical };
  const links: string[] = [];
  for (const anchor of document.querySelectorAll('a[href], area[href]')) {
    if (/\bnofollow\b/i.test(anchor.getAttribute('rel') ?? '')) continue;
    const link = parseLink(anchor.getAttribute('href') ?? '', base);
    if (link) links.push(link.href);
  }
  return { links, canonical };
}
