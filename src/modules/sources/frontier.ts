/** An http(s) URL without its fragment, or null for anything else (mailto:, javascript:, garbage). */
export function parseLink(href: string, base?: URL): URL | null {
  let url: URL;
  try {
    url = new URL(href, base);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  url.hash = '';
  return url;
}

// A directory's index file: the server's answer for the directory itself.
const INDEX_FILE = /\/index\.(?:html?|php)$/i;

/**
 * The identity of a page for de-duplication: `/a`, `/a/` and `/a/index.html` are one page (so are `/` and
 * `/index.html`); an empty query is no query. The URL parser has already lower-cased the host, dropped a default
 * port (`:80`, `:443`) and resolved `.`/`..`.
 */
export function pageKey(url: URL): string {
  const directory = url.pathname.replace(INDEX_FILE, '/');
  const path = directory.length > 1 ? directory.replace(/\/+$/, '') : directory;
  return `${url.origin}${path}${url.search === '?' ? '' : url.search}`;
}

/** A page waiting to be fetched, and how many links away from the start page it is. */
export interface QueuedPage {
  url: URL;
  depth: number;
}

/**
 * The pages a crawl has queued but not fetched yet, breadth first, each page (pageKey) once. It never holds
 * more than `capacity()` pages: a link met while it is full is dropped, so a page with 100,000 links costs
 * its parse, not 100,000 queued URLs. The caller sizes the capacity to the fetches the crawl may still make.
 */
export class Frontier {
  private readonly queue: QueuedPage[] = [];
  private head = 0;
  private readonly met = new Set<string>();
  /** Pages ever queued (fetched or waiting). */
  queued = 0;
  /** The most pages the frontier held at once. */
  largest = 0;

  constructor(private readonly capacity: () => number) {}

  /** Pages waiting. */
  get size(): number {
    return this.queue.length - this.head;
  }

  get full(): boolean {
    return this.size >= this.capacity();
  }

  /** True when this page was queued or marked before. */
  has(url: URL): boolean {
    return this.met.has(pageKey(url));
  }

  /** Marks a page as met without queueing it (a page fetched under another URL), so links to it are dropped. */
  mark(url: URL): void {
    this.met.add(pageKey(url));
  }

  /** Queues the page unless it was met before or the frontier is full; true when queued. */
  push(url: URL, depth: number): boolean {
    if (this.full) return false;
    const key = pageKey(url);
    if (this.met.has(key)) return false;
    this.met.add(key);
    this.queue.push({ url, depth });
    this.queued++;
    this.largest = Math.max(this.largest, this.size);
    return true;
  }

  /** The next page to fetch (the oldest queued), or undefined when none waits. */
  shift(): QueuedPage | undefined {
    if (this.head >= this.queue.length) return undefined;
    const next = this.queue[this.head++];
    // Fetched entries are dropped in batches, so the array does not keep every page of a long crawl.
    if (this.head >= 1024 && this.head * 2 >= this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    return next;
  }
}
