import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How the site answers one path. A string is an HTML page (200, text/html). In any string body or header
 * value, `{origin}` is replaced by the site's origin (http://127.0.0.1:<port>), so sitemaps and redirects can
 * name absolute URLs of a site whose port is not known in advance.
 */
export type SitePage =
  | string
  | {
      status?: number;
      body?: string | Uint8Array;
      headers?: Record<string, string>;
      /** Accept the request and never answer (the socket stays open until the site closes). */
      hang?: boolean;
      /** Send the status and headers, then never finish the body. */
      stallBody?: boolean;
      /** Answer only after this many milliseconds (a slow page). */
      delayMs?: number;
    };

/** The site's content: pages by path (`/a`, `/a?x=1`; the query is tried first, then the bare path). */
export interface SiteOptions {
  pages: Record<string, SitePage>;
  /** Served as /robots.txt (text/plain); without it /robots.txt is a 404 unless `pages` names it. */
  robots?: string;
  /** Served as /sitemap.xml (application/xml); without it /sitemap.xml is a 404 unless `pages` names it. */
  sitemap?: string;
  /** Every page answers only after this many milliseconds (a slow site), unless the page sets its own `delayMs`. */
  delayMs?: number;
}

/** A small local website for the crawler, source and evaluation tests. */
export interface TestSite {
  /** The site's origin, e.g. http://127.0.0.1:41234 (no trailing slash). */
  url: string;
  port: number;
  /** Every requested path (with its query), in arrival order. */
  requests: string[];
  /** Replaces or adds a page while the site runs (re-sync tests). */
  setPage(path: string, page: SitePage | undefined): void;
  close(): Promise<void>;
}

/** Starts the site on a free port of 127.0.0.1; unknown paths answer 404. */
export async function startSite(options: SiteOptions): Promise<TestSite> {
  const pages = new Map<string, SitePage>(Object.entries(options.pages));
  if (options.robots !== undefined && !pages.has('/robots.txt')) {
    pages.set('/robots.txt', { headers: { 'content-type': 'text/plain; charset=utf-8' }, body: options.robots });
  }
  if (options.sitemap !== undefined && !pages.has('/sitemap.xml')) {
    pages.set('/sitemap.xml', { headers: { 'content-type': 'application/xml' }, body: options.sitemap });
  }
  const requests: string[] = [];
  let origin = '';
  const fill = (text: string) => text.replaceAll('{origin}', origin);

  const server = http.createServer((request, response) => {
    const target = request.url ?? '/';
    requests.push(target);
    const page = pages.get(target) ?? pages.get(target.split('?')[0] ?? target);
    if (page === undefined) {
      response.writeHead(404, { 'content-type': 'text/html; charset=utf-8' }).end('<h1>Not found</h1>');
      return;
    }
    const spec: Exclude<SitePage, string> = typeof page === 'string' ? { body: page } : page;
    if (spec.hang) return;
    const delayMs = spec.delayMs ?? options.delayMs ?? 0;
    if (delayMs > 0) setTimeout(() => answer(response, spec), delayMs);
    else answer(response, spec);
  });

  function answer(response: http.ServerResponse, spec: Exclude<SitePage, string>): void {
    if (response.destroyed) return;
    const headers: Record<string, string> = { 'content-type': 'text/html; charset=utf-8' };
    for (const [name, value] of Object.entries(spec.headers ?? {})) headers[name.toLowerCase()] = fill(value);
    response.writeHead(spec.status ?? 200, headers);
    const body = typeof spec.body === 'string' ? fill(spec.body) : spec.body;
    if (spec.stallBody) {
      response.write(body ?? '<html>');
      return;
    }
    response.end(body);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
  return {
    url: origin,
    port,
    requests,
    setPage(path, page) {
      if (page === undefined) pages.delete(path);
      else pages.set(path, page);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A plain HTML page with a title, a paragraph of text and links (to paths or full URLs). */
export function htmlPage(title: string, text: string, links: string[] = []): string {
  const anchors = links.map((href) => `<li><a href="${href}">${href}</a></li>`).join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head>` +
    `<body><nav><ul>${anchors}</ul></nav><main><h1>${title}</h1><p>${text}</p></main></body></html>`;
}

/** A sitemap.xml listing these paths or URLs (paths are made absolute with `{origin}`). */
export function sitemapXml(locations: string[]): string {
  const urls = locations.map((loc) => `<url><loc>${loc.startsWith('/') ? `{origin}${loc}` : loc}</loc></url>`).join('');
  return `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls}</urlset>`;
}
