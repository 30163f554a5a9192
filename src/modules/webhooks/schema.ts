import { Type, type Static } from 'typebox';
import { IdOf, ListOf, Nullable, PageQuery, Timestamp } from '../../http/schemas.js';
import { EVENT_TYPES } from '../events/writer.js';

/** The event type a test delivery carries (POST /webhook_endpoints/{id}/test). */
export const TEST_EVENT_TYPE = 'webhook.test';

/** What an endpoint can subscribe to: event types, or "*" for all. */
export const SUBSCRIBABLE = [...EVENT_TYPES, '*'] as const;

const Url = Type.String({
  format: 'uri',
  maxLength: 2048,
  pattern: '^[hH][tT][tT][pP][sS]?://',
  description: 'An https (or http) URL without credentials; private and loopback addresses are refused unless the server allows them.',
});
const Events = Type.Array(Type.Enum(SUBSCRIBABLE), {
  minItems: 1,
  maxItems: SUBSCRIBABLE.length,
  uniqueItems: true,
  description: `The event types delivered, or ["*"] for all: ${EVENT_TYPES.join(', ')}.`,
});
const Description = Nullable(Type.String({ maxLength: 500 }));

/** What a replay of a creation or a rotation (the same Idempotency-Key) says in place of the secret. */
export const SECRET_SHOWN_ONCE_NOTE =
  'The signing secret is shown only once, in the first answer: this is a replay of that answer (same Idempotency-Key), and the secret is never stored with it. If it was lost, rotate the secret (POST /api/v1/webhook_endpoints/{id}/rotate_secret).';

/** A webhook endpoint. `secret` appears only in the answers of creation and rotation (null in their replays). */
export const WebhookEndpoint = Type.Object(
  {
    id: IdOf('webhookEndpoint'),
    object: Type.Literal('webhook_endpoint'),
    url: Type.String(),
    events: Type.Array(Type.String()),
    description: Nullable(Type.String()),
    enabled: Type.Boolean(),
    disabled_reason: Nullable(Type.Enum(['gone', 'failing'], { description: '`gone`: the receiver answered 410; `failing`: every delivery failed for days. Null when enabled or disabled by a person.' })),
    failing_since: Nullable(Timestamp),
    previous_secret_expires_at: Nullable(Timestamp),
    secret: Type.Optional(
      Nullable(
        Type.String({
          pattern: '^whsec_[A-Za-z0-9+/=]+$',
          description:
            'The signing secret (Standard Webhooks `whsec_…`). Shown once: in the answer of creation and of rotation; absent elsewhere. Null in a replay of that answer (the same Idempotency-Key within 24 hours): the secret is never stored for replays (see `secret_note`).',
        }),
      ),
    ),
    secret_note: Type.Optional(Type.String({ description: 'Only in a replay of a creation or a rotation, beside `secret: null`: the secret is shown once; rotate it if it was lost.' })),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'WebhookEndpoint' },
);
export type WebhookEndpointView = Static<typeof WebhookEndpoint>;

/** Body of POST /webhook_endpoints. */
export const CreateWebhookEndpointBody = Type.Object(
  { url: Url, events: Events, description: Type.Optional(Description) },
  { additionalProperties: false, title: 'CreateWebhookEndpoint' },
);
export type CreateWebhookEndpointInput = Static<typeof CreateWebhookEndpointBody>;

/** Body of PATCH /webhook_endpoints/{id}. */
export const UpdateWebhookEndpointBody = Type.Object(
  { url: Type.Optional(Url), events: Type.Optional(Events), description: Type.Optional(Description), enabled: Type.Optional(Type.Boolean()) },
  { additionalProperties: false, title: 'UpdateWebhookEndpoint' },
);
export type UpdateWebhookEndpointInput = Static<typeof UpdateWebhookEndpointBody>;

/** One try of a delivery. */
export const WebhookAttempt = Type.Object(
  {
    attempted_at: Timestamp,
    status_code: Nullable(Type.Integer({ description: 'The receiver\'s status; null when none came (timeout, connection refused).' })),
    latency_ms: Type.Integer(),
    response_excerpt: Nullable(Type.String({ description: 'The first kilobyte of the response body.' })),
    error: Nullable(Type.String()),
    next_retry_at: Nullable(Timestamp),
  },
  { title: 'WebhookAttempt' },
);

/** One event sent (or to be sent) to one endpoint; `id` is the `webhook-id` header, the same on every retry. */
export const WebhookDelivery = Type.Object(
  {
    id: IdOf('webhookDelivery'),
    object: Type.Literal('webhook_delivery'),
    endpoint_id: IdOf('webhookEndpoint'),
    event_id: IdOf('event'),
    event_type: Type.String(),
    status: Type.Enum(['pending', 'sending', 'succeeded', 'failed']),
    attempts: Type.Integer(),
    next_retry_at: Nullable(Timestamp),
    last_status_code: Nullable(Type.Integer()),
    attempt_log: Type.Array(WebhookAttempt, { description: 'The attempts, oldest first.' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'WebhookDelivery' },
);
export type WebhookDeliveryView = Static<typeof WebhookDelivery>;

/** Query of GET /webhook_endpoints. */
export const ListWebhookEndpointsQuery = Type.Object({ limit: PageQuery.limit, cursor: PageQuery.cursor }, { additionalProperties: false });
export type ListWebhookEndpointsFilters = Static<typeof ListWebhookEndpointsQuery>;

/** Query of GET /webhook_endpoints/{id}/deliveries. */
export const ListDeliveriesQuery = Type.Object(
  { limit: PageQuery.limit, cursor: PageQuery.cursor, status: Type.Optional(Type.Enum(['pending', 'succeeded', 'failed'])) },
  { additionalProperties: false },
);
export type ListDeliveriesFilters = Static<typeof ListDeliveriesQuery>;

/** `{id}` and `{delivery_id}` in a path (any string: a malformed id is a 404). */
export const DeliveryParams = Type.Object({ id: Type.String(), delivery_id: Type.String() });

export const WebhookEndpointList = ListOf(WebhookEndpoint, 'WebhookEndpointList');
export const WebhookDeliveryList = ListOf(WebhookDelivery, 'WebhookDeliveryList');
