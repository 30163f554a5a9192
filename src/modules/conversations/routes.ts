import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { apiContext } from '../../http/auth.js';
import { operation } from '../../http/operation.js';
import { IdParams } from '../../http/schemas.js';
import { Conversation, ConversationList, ListConversationsQuery } from './schema.js';
import type { ConversationService } from './service.js';

const TAG = 'Conversations';

/** /conversations: list and read conversations of every channel. */
export function conversationRoutes(conversations: ConversationService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/conversations',
      operation({
        method: 'GET',
        url: '/conversations',
        operationId: 'listConversations',
        summary: 'List conversations',
        description:
          'Lists the workspace\'s conversations from every channel (widget, API, dashboard), newest first, with cursor pagination. ' +
          'Filter by `chatbot_id`, `status`, `channel` and creation time.',
        tag: TAG,
        scope: 'conversations:read',
        querystring: ListConversationsQuery,
        success: { status: 200, description: 'A page of conversations.', schema: ConversationList, page: true },
      }),
      async (request, reply) => reply.links(await conversations.list(apiContext(request), request.query)),
    );

    app.get(
      '/conversations/:id',
      operation({
        method: 'GET',
        url: '/conversations/{id}',
        operationId: 'getConversation',
        summary: 'Get a conversation',
        description: 'Returns one conversation, with its ETag.',
        tag: TAG,
        scope: 'conversations:read',
        params: IdParams,
        success: { status: 200, description: 'The conversation.', schema: Conversation, versioned: true },
      }),
      async (request, reply) => {
        const { conversation, etag } = await conversations.get(apiContext(request), request.params.id);
        return reply.sendVersion(etag, conversation);
      },
    );
  };
}
