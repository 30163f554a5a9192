import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Page } from './pagination.js';

declare module 'fastify' {
  interface FastifyReply {
    /** Sends a page of a list, with a `Link: <…>; rel="next"` header when there is a next page. */
    links<T>(page: Page<T>): FastifyReply;
    /** Sets the `Link: <…>; rel="next"` header of a page when there is a next page. */
    nextLink<T>(page: Page<T>): FastifyReply;
    /** Sets 201, `Location` and (when given) `ETag` for a created resource. */
    created(location: string, etag?: string): FastifyReply;
  }
}

/** Adds the reply helpers shared by every resource. */
export function installReplyHelpers(app: FastifyInstance): void {
  // A cached (frozen) page is usually asked for with the same URL again: its header is built once per URL.
  const lastLinks = new WeakMap<object, { url: string; link: string }>();
  app.decorateReply('nextLink', function nextLink<T>(this: FastifyReply, page: Page<T>) {
    if (!page.next_cursor) return this;
    const last = lastLinks.get(page);
    if (last?.url === this.request.url) return this.header('Link', last.link);
    const url = new URL(this.request.url, 'http://placeholder');
    url.searchParams.set('cursor', page.next_cursor);
    const link = `<${url.pathname}${url.search}>; rel="next"`;
    if (Object.isFrozen(page)) lastLinks.set(page, { url: this.request.url, link });
    return this.header('Link', link);
  });
  app.decorateReply('links', function links<T>(this: FastifyReply, page: Page<T>) {
    return this.nextLink(page).send(page);
  });
  app.decorateReply('created', function created(this: FastifyReply, location: string, etag?: string) {
    this.code(201).header('Location', location);
    if (etag) this.header('ETag', etag);
    return this;
  });
}

/**
 * Sends values that are sent again and again unchanged (frozen entries of a `tableCache`) as JSON,
 * serialized by the route's response schema once per value instead of once per response. One sender per
 * route: the body depends on the route's schema. Values that are not frozen are serialized every time.
 */
export function sharedBodySender() {
  const bodies = new WeakMap<object, string>();
  return function sendShared(reply: FastifyReply, value: object): FastifyReply {
    let body = bodies.get(value);
    if (body === undefined) {
      // The route's schema serializer (fast-json-stringify) returns a string.
      body = reply.serialize(value) as string;
      if (Object.isFrozen(value)) bodies.set(value, body);
    }
    return reply.type('application/json; charset=utf-8').send(body);
  };
}
