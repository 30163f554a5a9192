import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { LiveEvent } from '../events/live.js';
import type { EventStreams } from '../events/streams.js';
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
    'A comment line keeps the connection open every 15 s. The server ends a stream after at most STREAM_MAX_MINUTES (60 by default): ' +
    'reconnect with `Last-Event-ID` and nothing is missed.',
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
 * status, resumed after the `Last-Event-ID` when given, within the stream limits (src/modules/events/streams.ts).
 */
export async function streamConversation(request: FastifyRequest, reply: FastifyReply, streams: EventStreams, visitor: VisitorSession): Promise<void> {
  await streams.serve(request, reply, { workspaceId: visitor.workspaceId, conversationId: visitor.conversation.id, present: forVisitor, retryMs: RETRY_MS });
}
