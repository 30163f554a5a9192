import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParams } from '../../http/schemas.js';
import { CreateChatbotBody, ListChatbotsQuery, UpdateChatbotBody } from '../../modules/chatbots/schema.js';
import type { Services } from '../../services.js';
import type { Preview } from '../preview.js';
import { PreviewMessageBody, PreviewParams } from '../schemas.js';
import { dashboardContext } from '../session.js';

/** AI Agents in the dashboard: the /api/v1 service and schemas, with the user as actor; plus the live preview. */
export function agentRoutes(services: Services, preview: Preview): FastifyPluginAsyncTypebox {
  const { chatbots } = services;
  return async (app) => {
    app.get('/chatbots', { schema: { querystring: ListChatbotsQuery } }, async (request) => chatbots.list(dashboardContext(request), request.query));

    app.post('/chatbots', { schema: { body: CreateChatbotBody } }, async (request, reply) => {
      const { chatbot } = await chatbots.create(dashboardContext(request), request.body);
      return reply.code(201).send(chatbot);
    });

    app.get('/chatbots/:id', { schema: { params: IdParams } }, async (request, reply) => {
      const { chatbot, etag } = await chatbots.get(dashboardContext(request), request.params.id);
      return reply.sendVersion(etag, chatbot);
    });

    app.patch('/chatbots/:id', { schema: { params: IdParams, body: UpdateChatbotBody } }, async (request, reply) => {
      const { chatbot, etag } = await chatbots.update(dashboardContext(request), request.params.id, request.body, request.headers['if-match']);
      return reply.sendVersion(etag, chatbot);
    });

    app.post('/chatbots/:id/preview', { schema: { params: IdParams } }, async (request, reply) =>
      reply.code(201).send(await preview.start(dashboardContext(request), request.params.id)),
    );

    app.post('/chatbots/:id/preview/:conversation_id/messages', { schema: { params: PreviewParams, body: PreviewMessageBody } }, async (request, reply) =>
      reply.code(201).send(await preview.send(dashboardContext(request), request.params.id, request.params.conversation_id, request.body.content)),
    );
  };
}
