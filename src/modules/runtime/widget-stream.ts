import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { openEventStream } from '../../http/event-stream.js';
import type { LiveEvent, LiveEvents, LiveSubscription } from '../events/live.js';
import type { VisitorSession } from './widget-service.js';

/** How long a visitor's browser waits before reconnecting a dropped stream. */
const RETRY_MS = 2000;

/** The SSE stream of GET /widget/v1/conversations/{conversation_id}/events. */
export const ConversationEventStream = Type.String({
  description:
    'Server-sent events, each with `id` (send it back as `Last-Event-ID` to resume): `message` (a new message of the conversation: ' +
    'the visitor\'s, the AI Agent\'s or an operator\'s, as the messages list presents it), `conversation` (`{id, status, mode, ' +
    'handoff_requested_at}` when the conversation closes, an operator takes over, or a person is asked for), and `ready` ' +
    '(`{}`: the stream is live; what happened before it was opened without `Last-Event-ID` is in the messages list). ' +
    'A comment line keeps the connection open every 15 s.',
});

/** What the visitor's stream says about an event of its conversation (nothing about other resources). */
function forVisitor(event: LiveEvent): [string, unknown] | null {
  if (event.type === 'message.created') return ['message', event.data];
  if (event.type === 'conversation.updated' || event.type === 'conversation.created') {
    const { id, status, mode, handoff_requested_at } = event.data;
    return ['conversation', { id, status, mode, handoff_requested_at }];
  }
  return null;
}

/**
 * Streams the visitor's conversation as it happens: its new messages (an operator's reply included) and its
 * status, resumed after `after` (the `Last-Event-ID`) when given. The stream lasts until the visitor leaves.
 */
export async function streamConversation(reply: FastifyReply, live: LiveEvents, visitor: VisitorSession, after: number | undefined): Promise<void> {
  let subscription: LiveSubscription | null = null;
  const stream = openEventStream(reply, { retryMs: RETRY_MS, onClose: () => subscription?.close() });
  try {
    subscription = await live.subscribe(visitor.workspaceId, {
      after,
      conversationId: visitor.conversation.id,
      deliver(events) {
        for (const event of events) {
          const said = forVisitor(event);
          if (said) stream.send(said[0], said[1], event.seq);
        }
      },
      heartbeat: () => stream.keepAlive(),
      end: () => stream.end(),
    });
  } catch (error) {
    reply.request.log.error({ err: error }, 'widget event stream could not start');
    stream.end();
    return;
  }
  if (stream.closed) subscription.close();
  else stream.send('ready', {}, subscription.seq);
}
