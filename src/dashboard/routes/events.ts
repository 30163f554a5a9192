import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { EventStreams } from '../../modules/events/streams.js';
import { dashboardContext } from '../session.js';

/**
 * The dashboard's live stream: every event of the workspace as it commits (`event: conversation.created`,
 * `message.created`, …, data `{id, type, created_at, data}` as GET /api/v1/events presents it), so the
 * conversation list and an open conversation update without a reload. Resumable with Last-Event-ID; bounded
 * like every stream (src/modules/events/streams.ts).
 */
export function eventStreamRoutes(streams: EventStreams): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/events', async (request, reply) =>
      streams.serve(request, reply, {
        workspaceId: dashboardContext(request).actor.workspaceId,
        present: (event) => [event.type, { id: event.id, type: event.type, created_at: event.created_at, data: event.data }],
        retryMs: 2000,
      }),
    );
  };
}
