import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParams } from '../../http/schemas.js';
import { sendExport } from '../../modules/conversations/export.js';
import { ExportConversationsQuery, ListConversationsQuery } from '../../modules/conversations/schema.js';
import { ListMessagesQuery } from '../../modules/messages/schema.js';
import type { Services } from '../../services.js';
import { OperatorReplyBody } from '../schemas.js';
import { dashboardContext } from '../session.js';

/** Conversations: list with filters and search, export (CSV / JSON Lines, streamed), transcript, reply as an operator, hand back to the agent, close. */
export function conversationRoutes(services: Services): FastifyPluginAsyncTypebox {
  const { conversations, messages } = services;
  return async (app) => {
    app.get('/conversations', { schema: { querystring: ListConversationsQuery } }, async (request) =>
      conversations.list(dashboardContext(request), request.query),
    );

    app.get('/conversations/export', { schema: { querystring: ExportConversationsQuery } }, async (request, reply) =>
      sendExport(reply, conversations.export(dashboardContext(request), request.query)),
    );

    app.get('/conversations/:id', { schema: { params: IdParams } }, async (request) =>
      (await conversations.get(dashboardContext(request), request.params.id)).conversation,
    );

    app.get('/conversations/:id/messages', { schema: { params: IdParams, querystring: ListMessagesQuery } }, async (request) =>
      messages.list(dashboardContext(request), request.params.id, request.query),
    );

    // An operator's message switches the conversation to human mode: the agent stays silent.
    app.post('/conversations/:id/messages', { schema: { params: IdParams, body: OperatorReplyBody } }, async (request, reply) =>
      reply.code(201).send(await messages.send(dashboardContext(request), request.params.id, { content: request.body.content, role: 'operator' })),
    );

    app.post('/conversations/:id/hand-back', { schema: { params: IdParams } }, async (request) =>
      conversations.handBack(dashboardContext(request), request.params.id),
    );

    app.post('/conversations/:id/close', { schema: { params: IdParams } }, async (request) => conversations.close(dashboardContext(request), request.params.id));
  };
}
