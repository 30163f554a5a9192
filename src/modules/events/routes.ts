import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { apiContext } from '../../http/auth.js';
import { operation } from '../../http/operation.js';
import { EventList, ListEventsQuery } from './schema.js';
import type { EventService } from './service.js';

/** /events: the workspace's domain events, for integrations that catch up after downtime. */
export function eventRoutes(events: EventService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/events',
      operation({
        method: 'GET',
        url: '/events',
        operationId: 'listEvents',
        summary: 'List events',
        description:
          'Lists the workspace\'s events oldest first, in the order their changes were committed, with cursor pagination: ' +
          'follow `next_cursor` until `has_more` is false, and keep the last cursor to resume later without missing or repeating an event. ' +
          'Each event carries the resource as the API presents it after the change. Filter by `type` (comma-separated) and `created_after`.',
        tag: 'Events',
        scope: 'events:read',
        querystring: ListEventsQuery,
        success: { status: 200, description: 'A page of events.', schema: EventList, page: true },
      }),
      async (request, reply) => reply.links(await events.list(apiContext(request), request.query)),
    );
  };
}
