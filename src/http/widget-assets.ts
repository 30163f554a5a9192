import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/schema.js';
import { ifNoneMatchSatisfied } from '../lib/versioning.js';
import { chatPageRoutes } from '../modules/chat-page/routes.js';

// widget/ sits at the repository root, two levels above this file both in src/http and in dist/http.
const WIDGET_FILE = new URL('../../widget/widget.js', import.meta.url);

/**
 * The browser-facing assets: `GET /widget.js` (the embeddable widget, read once at startup; public, cached
 * for five minutes, revalidated by ETag) and the hosted chat page `GET /chat/{chatbot_id}`. Neither is
 * part of the JSON API, so both are hidden from the OpenAPI document.
 */
export function widgetAssets(db: Db) {
  const script = readFileSync(WIDGET_FILE);
  const etag = `"${createHash('sha256').update(script).digest('base64url').slice(0, 22)}"`;

  return async function plugin(app: FastifyInstance): Promise<void> {
    app.get('/widget.js', { schema: { hide: true } }, async (request, reply) => {
      reply
        .header('Access-Control-Allow-Origin', '*')
        .header('Cross-Origin-Resource-Policy', 'cross-origin')
        .header('Cache-Control', 'public, max-age=300')
        .header('ETag', etag)
        .header('X-Content-Type-Options', 'nosniff');
      if (ifNoneMatchSatisfied(request.headers['if-none-match'], etag)) return reply.code(304).send();
      return reply.type('application/javascript; charset=utf-8').send(script);
    });
    await app.register(chatPageRoutes(db));
  };
}
