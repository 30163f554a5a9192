import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { apiContext } from '../../http/auth.js';
import { operation } from '../../http/operation.js';
import { IdParams } from '../../http/schemas.js';
import { CreateLeadBody, Lead, LeadList, ListLeadsQuery, UpdateLeadBody } from './schema.js';
import type { LeadService } from './service.js';

const TAG = 'Leads';

/** /leads: list, create, read and update captured leads. */
export function leadRoutes(leads: LeadService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/leads',
      operation({
        method: 'GET',
        url: '/leads',
        operationId: 'listLeads',
        summary: 'List captured leads',
        description:
          'Lists the workspace\'s leads, newest first, with cursor pagination. Filter by `chatbot_id`, `conversation_id`, `status`, `email`, ' +
          'creation time, and `updated_after` to sync changes.',
        tag: TAG,
        scope: 'leads:read',
        querystring: ListLeadsQuery,
        success: { status: 200, description: 'A page of leads.', schema: LeadList, page: true },
      }),
      async (request, reply) => reply.links(await leads.list(apiContext(request), request.query)),
    );

    app.post(
      '/leads',
      operation({
        method: 'POST',
        url: '/leads',
        operationId: 'createLead',
        summary: 'Create a lead',
        description: 'Creates a lead with an email or a phone number, optionally tied to an AI Agent and a conversation of the workspace.',
        tag: TAG,
        scope: 'leads:write',
        body: CreateLeadBody,
        success: { status: 201, description: 'The new lead.', schema: Lead, versioned: true },
      }),
      async (request, reply) => {
        const { lead, etag } = await leads.create(apiContext(request), request.body);
        return reply.created(`/api/v1/leads/${lead.id}`, etag).send(lead);
      },
    );

    app.get(
      '/leads/:id',
      operation({
        method: 'GET',
        url: '/leads/{id}',
        operationId: 'getLead',
        summary: 'Get a lead',
        description: 'Returns one lead, with its ETag.',
        tag: TAG,
        scope: 'leads:read',
        params: IdParams,
        success: { status: 200, description: 'The lead.', schema: Lead, versioned: true },
      }),
      async (request, reply) => {
        const { lead, etag } = await leads.get(apiContext(request), request.params.id);
        return reply.sendVersion(etag, lead);
      },
    );

    app.patch(
      '/leads/:id',
      operation({
        method: 'PATCH',
        url: '/leads/{id}',
        operationId: 'updateLead',
        summary: 'Update a lead',
        description:
          'Partially updates a lead: absent fields stay as they are, `null` clears a field (an email or a phone must remain). ' +
          'Send `If-Match` with the ETag you read to avoid overwriting someone else\'s change.',
        tag: TAG,
        scope: 'leads:write',
        params: IdParams,
        body: UpdateLeadBody,
        success: { status: 200, description: 'The updated lead.', schema: Lead, versioned: true },
      }),
      async (request, reply) => {
        const { lead, etag } = await leads.update(apiContext(request), request.params.id, request.body, request.headers['if-match']);
        return reply.sendVersion(etag, lead);
      },
    );
  };
}
