import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { lastEventId, openEventStream } from '../../http/event-stream.js';
import type { LiveEvents, LiveSubscription } from '../../modules/events/live.js';
import { dashboardContext } from '../session.js';

/**
 * The dashboard's live stream: every event of the workspace as it commits (`event: conversation.created`,
 * `message.created`, …, data `{id, type, created_at, data}` as GET /api/v1/events presents it), so the
 * conversation list and an open conversation update without a reload. Resumable with Last-Event-ID.
 */
export function eventStreamRoutes(live: LiveEvents): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get('/events', async (request, reply) => {
      const { workspaceId } = dashboardContext(request).actor;
      let subscription: LiveSubscription | null = null;
      const stream = openEventStream(reply, { retryMs: 2000, onClose: () => subscription?.close() });
      try {
        subscription = await live.subscribe(workspaceId, {
          after: lastEventId(request.headers['last-event-id']),
          deliver(events) {
            for (const event of events) stream.send(event.type, { id: event.id, type: event.type, created_at: event.created_at, data: event.data }, event.seq);
          },
          heartbeat: () => stream.keepAlive(),
          end: () => stream.end(),
        });
      } catch (error) {
        request.log.error({ err: error }, 'dashboard event stream could not start');
        stream.end();
        return;
      }
      if (stream.closed) subscription.close();
      else stream.send('ready', {}, subscription.seq);
    });
  };
}
