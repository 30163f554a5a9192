import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { apiContext } from '../../http/auth.js';
import { operation } from '../../http/operation.js';
import { IdParams } from '../../http/schemas.js';
import { CreateMessageBody, ListMessagesQuery, Message, MessageList } from './schema.js';
import type { MessageService } from './service.js';

const TAG = 'Conversations';

/** /conversations/{id}/messages: list a conversation's messages and send one. */
export function messageRoutes(messages: MessageService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/conversations/:id/messages',
      operation({
        method: 'GET',
        url: '/conversations/{id}/messages',
        operationId: 'listConversationMessages',
        summary: 'List conversation messages',
        description: 'Lists the messages of a conversation, oldest first (`order=desc` for newest first), with cursor pagination.',
        tag: TAG,
        scope: 'conversations:read',
        params: IdParams,
        querystring: ListMessagesQuery,
        success: { status: 200, description: 'A page of messages.', schema: MessageList, page: true },
      }),
      async (request, reply) => reply.links(await messages.list(apiContext(request), request.params.id, request.query)),
    );

    app.post(
      '/conversations/:id/messages',
      operation({
        method: 'POST',
        url: '/conversations/{id}/messages',
        operationId: 'createConversationMessage',
        summary: 'Send a text message into a conversation',
        description:
          'Stores a text message in a conversation. With `role: "user"` (default) the message is a visitor\'s, relayed by a custom channel, ' +
          'and the AI Agent answers it; with `role: "operator"` a human answers and the conversation switches to `mode: "human"`.',
        tag: TAG,
        scope: 'messages:write',
        params: IdParams,
        body: CreateMessageBody,
        success: { status: 201, description: 'The stored message.', schema: Message },
        errors: {
          409:
            'The conversation is closed (`conversation_closed`), a `user` message went to a conversation whose AI Agent is paused or archived (`chatbot_not_active`), ' +
            'or the same Idempotency-Key is still being processed (`idempotency_key_in_use`, with `Retry-After`).',
        },
      }),
      async (request, reply) => {
        const message = await messages.send(apiContext(request), request.params.id, request.body);
        return reply.created(`/api/v1/conversations/${message.conversation_id}/messages`).send(message);
      },
    );
  };
}
