import { parseJson } from '../../lib/json.js';
import type { WebhookAttemptRow, WebhookDeliveryRow, WebhookEndpointInfo } from './repository.js';
import type { WebhookDeliveryView, WebhookEndpointView } from './schema.js';

/** Turns a stored endpoint into its API shape; `secret` only when the caller has just made one. */
export function presentEndpoint(row: WebhookEndpointInfo, secret?: string): WebhookEndpointView {
  return {
    id: row.id,
    object: 'webhook_endpoint',
    url: row.url,
    events: parseJson<string[]>(row.events, []),
    description: row.description,
    enabled: row.enabled === 1,
    disabled_reason: row.disabled_reason as WebhookEndpointView['disabled_reason'],
    failing_since: row.failing_since,
    previous_secret_expires_at: row.previous_secret_expires_at,
    ...(secret !== undefined ? { secret } : {}),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

const STATUS: Record<WebhookDeliveryRow['state'], WebhookDeliveryView['status']> = { pending: 'pending', running: 'sending', succeeded: 'succeeded', failed: 'failed' };

/** Turns a stored delivery and its attempts (oldest first) into its API shape. */
export function presentDelivery(row: WebhookDeliveryRow, attempts: readonly WebhookAttemptRow[]): WebhookDeliveryView {
  return {
    id: row.id,
    object: 'webhook_delivery',
    endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: STATUS[row.state],
    attempts: Number(row.attempts),
    next_retry_at: row.state === 'pending' ? row.run_after : null,
    last_status_code: row.last_status,
    attempt_log: attempts.map((attempt) => ({
      attempted_at: attempt.attempted_at,
      status_code: attempt.status_code,
      latency_ms: Number(attempt.latency_ms),
      response_excerpt: attempt.response_excerpt,
      error: attempt.error,
      next_retry_at: attempt.next_retry_at,
    })),
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
