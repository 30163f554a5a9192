import type { FastifyInstance, FastifyReply } from 'fastify';
import { ifNoneMatchSatisfied } from '../lib/versioning.js';
import type { Page } from './pagination.js';

declare module 'fastify' {
  interface FastifyReply {
    /** Sends a page of a list, with a `Link: <…>; rel="next"` header when there is a next page. */
    links<T>(page: Page<T>): FastifyReply;
    /** Sets 201, `Location` and (when given) `ETag` for a created resource. */
    created(location: string, etag?: string): FastifyReply;
    /**
     * Sends one version of a resource with its `ETag`; a GET whose `If-None-Match` names that version gets
     * 304 without a body instead (RFC 9110 §13.1.2).
     */
    sendVersion(etag: string, body: unknown): FastifyReply;
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
  app.decorateReply('sendVersion', function sendVersion(this: FastifyReply, etag: string, body: unknown) {
    this.header('ETag', etag);
    const method = this.request.method;
    if ((method === 'GET' || method === 'HEAD') && ifNoneMatchSatisfied(this.request.headers['if-none-match'], etag)) return this.code(304).send();
    return this.send(body);
  });
}
