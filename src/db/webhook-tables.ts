/**
 * The tables of webhooks (migration 0019): endpoints, their queued deliveries and each delivery attempt.
 * Part of `Database` (src/db/schema.ts).
 */
import type { Generated } from 'kysely';

/** A workspace's webhook receiver (migration 0019). */
export interface WebhookEndpointsTable {
  id: string;
  workspace_id: string;
  url: string;
  description: string | null;
  /** JSON array of event types, or ["*"]. */
  events: string;
  /** 0/1. */
  enabled: number;
  /** Why the service disabled it ('gone': the receiver answered 410; 'failing': failing for days); null when a person did, or enabled. */
  disabled_reason: string | null;
  /**
   * The `whsec_…` secret that signs every delivery, encrypted under SECRET_KEY (`v1.…`, src/modules/webhooks/secrets.ts;
   * never returned after creation or rotation). Versions before the encryption stored it in clear: such rows are
   * encrypted at startup.
   */
  secret: string;
  /** The secret before the last rotation (encrypted likewise), still signing beside the new one until `previous_secret_expires_at`. */
  previous_secret: string | null;
  previous_secret_expires_at: string | null;
  /** First failed delivery since the last success (null: not failing). */
  failing_since: string | null;
  created_at: string;
  updated_at: string;
}

/** One event for one endpoint; its id is the `webhook-id`, and the row is the claimable job. */
export interface WebhookDeliveriesTable {
  id: string;
  workspace_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  /** The exact JSON body sent, fixed when queued (every retry sends the same bytes). */
  payload: string;
  state: 'pending' | 'running' | 'succeeded' | 'failed';
  attempts: Generated<number>;
  /** The next attempt is not made before this instant. */
  run_after: string;
  /** While running: the lease; lapsed (its runner died), the delivery is claimed again. */
  locked_until: string | null;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

/** One try of a delivery, for the delivery log. */
export interface WebhookAttemptsTable {
  id: string;
  workspace_id: string;
  delivery_id: string;
  attempted_at: string;
  /** The receiver's status; null when none came (timeout, refused, connection error). */
  status_code: number | null;
  latency_ms: number;
  /** The first KB of the response body. */
  response_excerpt: string | null;
  error: string | null;
  /** When the next attempt is due (null: none). */
  next_retry_at: string | null;
}
