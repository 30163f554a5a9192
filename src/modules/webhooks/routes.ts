import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { apiContext } from '../../http/auth.js';
import { operation } from '../../http/operation.js';
import { IdParams } from '../../http/schemas.js';
import {
  CreateWebhookEndpointBody,
  DeliveryParams,
  ListDeliveriesQuery,
  ListWebhookEndpointsQuery,
  SECRET_SHOWN_ONCE_NOTE,
  UpdateWebhookEndpointBody,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookEndpoint,
  WebhookEndpointList,
} from './schema.js';
import type { WebhookService } from './service.js';

const TAG = 'Webhooks';
const SIGNING =
  'Deliveries follow Standard Webhooks: a POST of `{ "type", "timestamp", "data" }` with `webhook-id` (the same on every retry), ' +
  '`webhook-timestamp` (seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256 of id.timestamp.body>` with the base64-decoded part of the secret).';

const SHOWN_ONCE =
  'Secrets are stored encrypted and never kept for replays: a retry with the same Idempotency-Key answers the same status and body with `secret: null` and a `secret_note`; rotate the secret if it was lost.';
const NO_KEY =
  'The server has no key to store the secret encrypted (`secret_key_required`: PostgreSQL without SECRET_KEY), or the same Idempotency-Key is still being processed (`idempotency_key_in_use`).';
const ONE_TIME_SECRET = { field: 'secret', note: SECRET_SHOWN_ONCE_NOTE };

/** /webhook_endpoints: receivers of the workspace's events, their secrets, their delivery log. */
export function webhookRoutes(webhooks: WebhookService): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/webhook_endpoints',
      operation({
        method: 'POST',
        url: '/webhook_endpoints',
        operationId: 'createWebhookEndpoint',
        summary: 'Create a webhook endpoint',
        description: `Subscribes a URL to event types (or \`["*"]\`). The answer carries the signing secret \`whsec_…\`, shown only here and on rotation. ${SHOWN_ONCE} ${SIGNING}`,
        tag: TAG,
        scope: 'webhooks:write',
        body: CreateWebhookEndpointBody,
        success: { status: 201, description: 'The new endpoint, with its secret (null in a replay).', schema: WebhookEndpoint, versioned: true, oneTimeSecret: ONE_TIME_SECRET },
        errors: {
          400: 'The body fails validation, or the URL carries credentials or points to a private address (unless the server allows them).',
          409: NO_KEY,
        },
      }),
      async (request, reply) => {
        const { endpoint, etag } = await webhooks.create(apiContext(request), request.body);
        return reply.created(`/api/v1/webhook_endpoints/${endpoint.id}`, etag).send(endpoint);
      },
    );

    app.get(
      '/webhook_endpoints',
      operation({
        method: 'GET',
        url: '/webhook_endpoints',
        operationId: 'listWebhookEndpoints',
        summary: 'List webhook endpoints',
        description: 'Lists the workspace\'s endpoints, newest first, with cursor pagination (secrets are never listed).',
        tag: TAG,
        scope: 'webhooks:read',
        querystring: ListWebhookEndpointsQuery,
        success: { status: 200, description: 'A page of endpoints.', schema: WebhookEndpointList, page: true },
      }),
      async (request, reply) => reply.links(await webhooks.list(apiContext(request), request.query)),
    );

    app.get(
      '/webhook_endpoints/:id',
      operation({
        method: 'GET',
        url: '/webhook_endpoints/{id}',
        operationId: 'getWebhookEndpoint',
        summary: 'Get a webhook endpoint',
        description: 'Returns one endpoint, with its ETag (without its secret).',
        tag: TAG,
        scope: 'webhooks:read',
        params: IdParams,
        success: { status: 200, description: 'The endpoint.', schema: WebhookEndpoint, versioned: true },
      }),
      async (request, reply) => {
        const { endpoint, etag } = await webhooks.get(apiContext(request), request.params.id);
        return reply.sendVersion(etag, endpoint);
      },
    );

    app.patch(
      '/webhook_endpoints/:id',
      operation({
        method: 'PATCH',
        url: '/webhook_endpoints/{id}',
        operationId: 'updateWebhookEndpoint',
        summary: 'Update a webhook endpoint',
        description: 'Changes `url`, `events`, `description` or `enabled`; absent fields stay. Enabling an endpoint the service disabled clears `disabled_reason`.',
        tag: TAG,
        scope: 'webhooks:write',
        params: IdParams,
        body: UpdateWebhookEndpointBody,
        success: { status: 200, description: 'The updated endpoint.', schema: WebhookEndpoint, versioned: true },
      }),
      async (request, reply) => {
        const { endpoint, etag } = await webhooks.update(apiContext(request), request.params.id, request.body, request.headers['if-match']);
        return reply.sendVersion(etag, endpoint);
      },
    );

    app.delete(
      '/webhook_endpoints/:id',
      operation({
        method: 'DELETE',
        url: '/webhook_endpoints/{id}',
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint',
        description: 'Removes the endpoint and its delivery log; deliveries not yet sent are dropped.',
        tag: TAG,
        scope: 'webhooks:write',
        params: IdParams,
        success: { status: 204, description: 'Deleted.' },
      }),
      async (request, reply) => {
        await webhooks.remove(apiContext(request), request.params.id);
        return reply.code(204).send();
      },
    );

    app.post(
      '/webhook_endpoints/:id/rotate_secret',
      operation({
        method: 'POST',
        url: '/webhook_endpoints/{id}/rotate_secret',
        operationId: 'rotateWebhookSecret',
        summary: 'Rotate the signing secret',
        description: `Issues a new secret, shown once in the answer. For 24 hours the previous one keeps signing too: \`webhook-signature\` then carries both signatures. ${SHOWN_ONCE}`,
        tag: TAG,
        scope: 'webhooks:write',
        params: IdParams,
        success: { status: 200, description: 'The endpoint, with its new secret (null in a replay).', schema: WebhookEndpoint, oneTimeSecret: ONE_TIME_SECRET },
        errors: { 409: NO_KEY },
      }),
      async (request) => (await webhooks.rotateSecret(apiContext(request), request.params.id)).endpoint,
    );

    app.get(
      '/webhook_endpoints/:id/deliveries',
      operation({
        method: 'GET',
        url: '/webhook_endpoints/{id}/deliveries',
        operationId: 'listWebhookDeliveries',
        summary: 'List an endpoint\'s deliveries',
        description: 'The delivery log, newest first: each event sent, its status, and every attempt (status code, latency, response excerpt, next retry).',
        tag: TAG,
        scope: 'webhooks:read',
        params: IdParams,
        querystring: ListDeliveriesQuery,
        success: { status: 200, description: 'A page of deliveries.', schema: WebhookDeliveryList, page: true },
      }),
      async (request, reply) => reply.links(await webhooks.deliveries(apiContext(request), request.params.id, request.query)),
    );

    app.post(
      '/webhook_endpoints/:id/test',
      operation({
        method: 'POST',
        url: '/webhook_endpoints/{id}/test',
        operationId: 'testWebhookEndpoint',
        summary: 'Send a test event',
        description: 'Queues a `webhook.test` event for this endpoint only, signed and retried like any other.',
        tag: TAG,
        scope: 'webhooks:write',
        params: IdParams,
        success: { status: 202, description: 'The queued delivery.', schema: WebhookDelivery },
        errors: { 409: 'The endpoint is disabled (`invalid_status_transition`), or the same Idempotency-Key is still being processed (`idempotency_key_in_use`).' },
      }),
      async (request, reply) => reply.code(202).send(await webhooks.test(apiContext(request), request.params.id)),
    );

    app.post(
      '/webhook_endpoints/:id/deliveries/:delivery_id/resend',
      operation({
        method: 'POST',
        url: '/webhook_endpoints/{id}/deliveries/{delivery_id}/resend',
        operationId: 'resendWebhookDelivery',
        summary: 'Resend a delivery',
        description: 'Sends the delivery again, with the same `webhook-id` and body, and a new round of retries if it fails.',
        tag: TAG,
        scope: 'webhooks:write',
        params: DeliveryParams,
        success: { status: 202, description: 'The delivery, queued again.', schema: WebhookDelivery },
        errors: { 409: 'The endpoint is disabled (`invalid_status_transition`), or the same Idempotency-Key is still being processed (`idempotency_key_in_use`).' },
      }),
      async (request, reply) => reply.code(202).send(await webhooks.resend(apiContext(request), request.params.id, request.params.delivery_id)),
    );
  };
}
