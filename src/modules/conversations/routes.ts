import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { apiContext } from '../../http/auth.js';
import { operation } from '../../http/operation.js';
import { IdParams } from '../../http/schemas.js';
import { sendExport } from './export.js';
import { Conversation, ConversationExportCsv, ConversationExportJsonLines, ConversationList, ExportConversationsQuery, ListConversationsQuery } from './schema.js';
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
          'Filter by `chatbot_id`, `status`, `channel`, `mode`, waiting for a person (`handoff=requested`), creation time, and the words of a message (`q`). ' +
          'Each conversation carries its visitor\'s name and email when known and its newest message.',
        tag: TAG,
        scope: 'conversations:read',
        querystring: ListConversationsQuery,
        success: { status: 200, description: 'A page of conversations.', schema: ConversationList, page: true },
      }),
      async (request, reply) => reply.links(await conversations.list(apiContext(request), request.query)),
    );

    // Registered before /conversations/:id; Fastify prefers the static path anyway.
    app.get(
      '/conversations/export',
      operation({
        method: 'GET',
        url: '/conversations/export',
        operationId: 'exportConversations',
        summary: 'Export conversations with their messages',
        description:
          'Streams every conversation matching the filters of the list (newest first) with all its messages, as an attachment: ' +
          '`format=jsonl` (default, `application/x-ndjson`): one conversation per line with a `messages` array; ' +
          '`format=csv` (`text/csv`): one row per message with its conversation\'s columns. Read as it is produced, whatever its size.',
        tag: TAG,
        scope: 'conversations:read',
        querystring: ExportConversationsQuery,
        success: {
          status: 200,
          description: 'The export file (`Content-Disposition: attachment`).',
          content: { 'application/x-ndjson': ConversationExportJsonLines, 'text/csv': ConversationExportCsv },
        },
      }),
      async (request, reply) => sendExport(reply, conversations.export(apiContext(request), request.query)),
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
