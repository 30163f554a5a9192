import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Page } from './pagination.js';

declare module 'fastify' {
  interface FastifyReply {
    /** Sends a page of a list, with a `Link: <…>; rel="next"` header when there is a next page. */
    links<T>(page: Page<T>): FastifyReply;
    /** Sets 201, `Location` and (when given) `ETag` for a created resource. */
    created(location: string, etag?: string): FastifyReply;
  }
}

/** Adds the reply helpers shared by every resource. */
export function installReplyHelpers(app: FastifyInstance): void {
  app.decorateReply('links', function links<T>(this: FastifyReply, page: Page<T>) {
    if (page.next_cursor) {
      const url = new URL(this.request.url, 'http://placeholder');
      url.searchParams.set('cursor', page.next_cursor);
      this.header('Link', `<${url.pathname}${url.search}>; rel="next"`);
    }
    return this.send(page);
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
