import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** Where `npm run build:web` writes the dashboard (the same from src/ under tsx and from dist/). */
export const WEB_DIST = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/web');

const TYPES: Record<string, string> = {
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
};

// The client-side routes of the dashboard: each answers with index.html, and the app routes in the browser.
const SPA_ROUTES = ['/', '/signin', '/signup', '/invite', '/forgot-password', '/reset-password', '/agents', '/agents/*', '/conversations', '/conversations/*', '/leads', '/analytics', '/settings', '/settings/*'];

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Dashboard not built</title></head>
<body style="font:16px system-ui;margin:3rem"><h1>The dashboard has not been built</h1>
<p>Run <code>npm run build</code> (or <code>npm start</code>, which builds first) and reload. The API is at <a href="/docs">/docs</a>.</p></body></html>`;

// Unknown paths under these prefixes keep the JSON problem 404: they are API calls or files, never pages.
const NOT_PAGES = ['/api/', '/app/api/', '/assets/', '/docs/', '/widget', '/chat/'];

/** True when an unmatched request is a browser asking for a dashboard page (a GET for HTML outside the API). */
function wantsPage(method: string, url: string, accept: string | undefined): boolean {
  if (method !== 'GET' && method !== 'HEAD') return false;
  if (!accept?.includes('text/html')) return false;
  const path = url.split('?')[0]!;
  return !NOT_PAGES.some((prefix) => path === prefix.slice(0, -1) || path.startsWith(prefix));
}

/**
 * Serves the built single-page dashboard from memory: hashed assets under /assets with a long cache
 * life, and index.html (never cached) for every dashboard route. An unknown path that a browser asks
 * for as a page gets index.html with a 404 status, so the app renders its own "page not found"; the
 * API, the widget, /docs and the health checks keep their own routes and JSON 404s.
 */
export function registerWebApp(app: FastifyInstance, root: string = WEB_DIST): void {
  const assets = new Map<string, { body: Buffer; type: string }>();
  const assetDir = path.join(root, 'assets');
  if (fs.existsSync(assetDir)) {
    for (const name of fs.readdirSync(assetDir)) {
      assets.set(name, { body: fs.readFileSync(path.join(assetDir, name)), type: TYPES[path.extname(name)] ?? 'application/octet-stream' });
    }
  }
  const indexFile = path.join(root, 'index.html');
  const index = fs.existsSync(indexFile) ? fs.readFileSync(indexFile) : null;

  const sendIndex = (reply: FastifyReply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('Cache-Control', 'no-cache')
      .header('X-Frame-Options', 'DENY')
      .header('Content-Security-Policy', "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
      .header('Referrer-Policy', 'same-origin')
      .send(index ?? NOT_BUILT);

  for (const url of SPA_ROUTES) app.get(url, { schema: { hide: true } }, async (_request, reply) => sendIndex(reply));
  // Not a wildcard route: that would turn a POST to an unknown API path into a 405 naming GET.
  app.addHook('onRequest', async (request, reply) => {
    if (request.is404 && wantsPage(request.method, request.url, request.headers.accept)) return sendIndex(reply.code(404));
  });

  app.get('/assets/:name', { schema: { hide: true } }, async (request, reply) => {
    const asset = assets.get((request.params as { name: string }).name);
    if (!asset) return reply.callNotFound();
    return reply.type(asset.type).header('Cache-Control', 'public, max-age=31536000, immutable').send(asset.body);
  });
}
