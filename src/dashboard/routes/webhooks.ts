import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { IdParams } from '../../http/schemas.js';
import { CreateWebhookEndpointBody, DeliveryParams, ListDeliveriesQuery, UpdateWebhookEndpointBody } from '../../modules/webhooks/schema.js';
import type { Services } from '../../services.js';
import { dashboardContext } from '../session.js';

/**
 * Settings → Webhooks (owners and admins): the /api/v1 webhook endpoint service, as the signed-in user.
 * The secret is in the answers of creation and rotation only, as in the API.
 */
export function webhookRoutes(services: Services): FastifyPluginAsyncTypebox {
  const { webhooks } = services;
  const admin = { minRole: 'admin' as const };
  return async (app) => {
    app.get('/webhook-endpoints', { config: admin }, async (request) => webhooks.list(dashboardContext(request), { limit: 100 }));

    app.post('/webhook-endpoints', { schema: { body: CreateWebhookEndpointBody }, config: admin }, async (request, reply) =>
      reply.code(201).send((await webhooks.create(dashboardContext(request), request.body)).endpoint),
    );

    app.patch('/webhook-endpoints/:id', { schema: { params: IdParams, body: UpdateWebhookEndpointBody }, config: admin }, async (request) =>
      (await webhooks.update(dashboardContext(request), request.params.id, request.body)).endpoint,
    );

    app.delete('/webhook-endpoints/:id', { schema: { params: IdParams }, config: admin }, async (request, reply) => {
      await webhooks.remove(dashboardContext(request), request.params.id);
      return reply.code(204).send();
    });

    app.post('/webhook-endpoints/:id/rotate-secret', { schema: { params: IdParams }, config: admin }, async (request) =>
      (await webhooks.rotateSecret(dashboardContext(request), request.params.id)).endpoint,
    );

    app.post('/webhook-endpoints/:id/test', { schema: { params: IdParams }, config: admin }, async (request, reply) =>
      reply.code(202).send(await webhooks.test(dashboardContext(request), request.params.id)),
    );

    app.get('/webhook-endpoints/:id/deliveries', { schema: { params: IdParams, querystring: ListDeliveriesQuery }, config: admin }, async (request) =>
      webhooks.deliveries(dashboardContext(request), request.params.id, request.query),
    );

    app.post('/webhook-endpoints/:id/deliveries/:delivery_id/resend', { schema: { params: DeliveryParams }, config: admin }, async (request, reply) =>
      reply.code(202).send(await webhooks.resend(dashboardContext(request), request.params.id, request.params.delivery_id)),
    );
  };
}
