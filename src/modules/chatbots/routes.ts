import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { apiContext } from '../../http/auth.js';
import { operation } from '../../http/operation.js';
import { IdParams } from '../../http/schemas.js';
import { Chatbot, ChatbotList, CreateChatbotBody, ListChatbotsQuery, UpdateChatbotBody } from './schema.js';
import type { ChatbotService } from './service.js';

const TAG = 'AI Agents';

/** /chatbots: list, create, read and update AI Agents. */
export function chatbotRoutes(chatbots: ChatbotService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/chatbots',
      operation({
        method: 'GET',
        url: '/chatbots',
        operationId: 'listChatbots',
        summary: 'List AI Agents',
        description: 'Lists the workspace\'s AI Agents, newest first, with cursor pagination. Filter by `status` and creation time.',
        tag: TAG,
        scope: 'chatbots:read',
        querystring: ListChatbotsQuery,
        success: { status: 200, description: 'A page of AI Agents.', schema: ChatbotList, page: true },
      }),
      async (request, reply) => reply.links(await chatbots.list(apiContext(request), request.query)),
    );

    app.post(
      '/chatbots',
      operation({
        method: 'POST',
        url: '/chatbots',
        operationId: 'createChatbot',
        summary: 'Create a draft AI Agent',
        description: 'Creates an AI Agent in the `draft` state. Publish it later with `PATCH {"status": "active"}`.',
        tag: TAG,
        scope: 'chatbots:write',
        body: CreateChatbotBody,
        success: { status: 201, description: 'The new draft AI Agent.', schema: Chatbot, versioned: true },
      }),
      async (request, reply) => {
        const { chatbot, etag } = await chatbots.create(apiContext(request), request.body);
        return reply.created(`/api/v1/chatbots/${chatbot.id}`, etag).send(chatbot);
      },
    );

    app.get(
      '/chatbots/:id',
      operation({
        method: 'GET',
        url: '/chatbots/{id}',
        operationId: 'getChatbot',
        summary: 'Get an AI Agent',
        description: 'Returns one AI Agent, with its ETag.',
        tag: TAG,
        scope: 'chatbots:read',
        params: IdParams,
        success: { status: 200, description: 'The AI Agent.', schema: Chatbot, versioned: true },
      }),
      async (request, reply) => {
        const { chatbot, etag } = await chatbots.get(apiContext(request), request.params.id);
        return reply.sendVersion(etag, chatbot);
      },
    );

    app.patch(
      '/chatbots/:id',
      operation({
        method: 'PATCH',
        url: '/chatbots/{id}',
        operationId: 'updateChatbot',
        summary: 'Update an AI Agent',
        description:
          'Partially updates an AI Agent: absent fields stay as they are, `null` clears a nullable field. ' +
          'Change `status` to publish (`active`), pause, resume or archive it: draft → active ⇄ paused → archived. ' +
          'Send `If-Match` with the ETag you read to avoid overwriting someone else\'s change.',
        tag: TAG,
        scope: 'chatbots:write',
        params: IdParams,
        body: UpdateChatbotBody,
        success: { status: 200, description: 'The updated AI Agent.', schema: Chatbot, versioned: true },
        errors: { 409: 'The status change is not allowed (`invalid_status_transition`), or the agent is archived (`chatbot_archived`).' },
      }),
      async (request, reply) => {
        const { chatbot, etag } = await chatbots.update(apiContext(request), request.params.id, request.body, request.headers['if-match']);
        return reply.sendVersion(etag, chatbot);
      },
    );
  };
}
