import type { Kysely } from 'kysely';
import type { WebhooksConfig } from '../../config.js';
import { lockedForUpdate } from '../../db/dialect.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import type { OperationContext } from '../../lib/actor.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { safeFetch, type OutboundResponse } from '../../lib/outbound-fetch.js';
import type { AuditWriter } from '../audit/writer.js';
import type { ClaimableQueue } from '../runtime/queues.js';
import type { WorkerLog } from '../runtime/reply-worker.js';
import { webhookDeliveryRepository, webhookEndpointRepository, type WebhookDeliveryRow, type WebhookEndpointRow } from './repository.js';
import type { WebhookSecrets } from './secrets.js';
import { signatureHeader } from './signature.js';

/** Bytes of a response body kept in the delivery log. */
const EXCERPT_BYTES = 1024;
/** An endpoint whose deliveries fail for good after failing this long is disabled. */
export const DISABLE_AFTER_FAILING_MS = 5 * 24 * 3600_000;
/** The longest wait a Retry-After may ask for. */
const MAX_RETRY_AFTER_MS = 24 * 3600_000;
/** Up to this fraction of a retry delay is added at random, so failed deliveries do not come back in a herd. */
const JITTER = 0.2;

/** What the delivery runner is built from. */
export interface WebhookRunnerDeps {
  db: Kysely<Database>;
  clock: Clock;
  config: WebhooksConfig;
  audit: AuditWriter;
  log: WorkerLog;
  /** The job runner's lease (REPLY_LEASE_MS); a delivery holds it on top of the timeout. */
  leaseMs: number;
  userAgent: string;
  /** Decrypts the endpoints' stored secrets to sign with. */
  secrets: WebhookSecrets;
}

/** What one attempt gave. */
interface AttemptResult {
  status: number | null;
  headers: OutboundResponse['headers'];
  excerpt: string | null;
  error: string | null;
  latencyMs: number;
}

/** Retry-After in milliseconds (seconds or an HTTP date), or null when absent or unreadable. */
function retryAfterMs(value: string | string[] | undefined, now: Date): number | null {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return null;
  const ms = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) * 1000 : Date.parse(raw) - now.getTime();
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS) : null;
}

// One promise per shutdown signal, shared by every delivery in flight (not one abort listener each).
const shutdowns = new WeakMap<AbortSignal, Promise<null>>();
function shutdownOf(signal: AbortSignal): Promise<null> {
  let settled = shutdowns.get(signal);
  if (!settled) {
    settled = signal.aborted ? Promise.resolve(null) : new Promise((resolve) => signal.addEventListener('abort', () => resolve(null), { once: true }));
    shutdowns.set(signal, settled);
  }
  return settled;
}

function systemContext(workspaceId: string): OperationContext {
  return { actor: { type: 'system', id: 'webhooks', name: 'Webhook delivery', workspaceId }, request: { requestId: null, ip: null, userAgent: null } };
}

/**
 * Webhook deliveries as a queue of the one job runner (src/modules/runtime/reply-worker.ts), in slots of
 * their own (WEBHOOK_CONCURRENCY). A delivery is claimed with a lease that outlasts its timeout; a process
 * that dies mid-delivery leaves a lease that lapses, and the delivery is claimed again (at least once).
 */
export function createWebhookRunner(deps: WebhookRunnerDeps): ClaimableQueue<WebhookDeliveryRow> {
  const { db, clock, config, audit, log, leaseMs, userAgent, secrets } = deps;
  const policy = {
    allowPrivateHosts: config.allowPrivateHosts,
    timeoutMs: config.timeoutMs,
    maxResponseBytes: EXCERPT_BYTES,
    truncateBody: true,
    maxRedirects: 0,
    followRedirects: false,
    userAgent,
  };

  // The live secrets, decrypted: the current one, and the previous one during a rotation's overlap.
  function signingSecrets(endpoint: WebhookEndpointRow, now: Date): string[] {
    const stored = [endpoint.secret];
    if (endpoint.previous_secret && endpoint.previous_secret_expires_at && endpoint.previous_secret_expires_at > now.toISOString()) stored.push(endpoint.previous_secret);
    return stored.map((value) => secrets.open(endpoint.id, value));
  }

  // One POST, signed with every live secret. Never throws: a refusal, a timeout or a secret that does not
  // decrypt (nothing is sent then) is an attempt without a status.
  async function attempt(delivery: WebhookDeliveryRow, endpoint: WebhookEndpointRow, now: Date): Promise<AttemptResult> {
    const timestamp = Math.floor(now.getTime() / 1000);
    const started = clock.monotonicMs();
    try {
      const headers = {
        'content-type': 'application/json',
        'webhook-id': delivery.id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(signingSecrets(endpoint, now), delivery.id, timestamp, delivery.payload),
      };
      const response = await safeFetch(endpoint.url, policy, headers, { method: 'POST', body: delivery.payload });
      const excerpt = Buffer.from(response.body).toString('utf8');
      return { status: response.status, headers: response.headers, excerpt: excerpt || null, error: null, latencyMs: Math.round(clock.monotonicMs() - started) };
    } catch (error) {
      return { status: null, headers: {}, excerpt: null, error: error instanceof Error ? error.message : String(error), latencyMs: Math.round(clock.monotonicMs() - started) };
    }
  }

  // When the next attempt is due after a failure, or null when the schedule is used up.
  function nextRetry(delivery: WebhookDeliveryRow, result: AttemptResult, now: Date): Date | null {
    const step = config.retryScheduleSeconds[Number(delivery.attempts) - 1];
    if (step === undefined) return null;
    let delay = step * 1000 * (1 + Math.random() * JITTER);
    if (result.status === 429 || result.status === 503) delay = Math.max(delay, retryAfterMs(result.headers['retry-after'], now) ?? 0);
    return new Date(now.getTime() + delay);
  }

  // Disables an endpoint the service gave up on, and tells its owners (the audit log, a log line).
  async function disable(trx: Parameters<AuditWriter['record']>[0], endpoint: WebhookEndpointRow, reason: 'gone' | 'failing', at: string): Promise<void> {
    await webhookEndpointRepository.update(trx, endpoint.workspace_id, endpoint.id, { enabled: 0, disabled_reason: reason, updated_at: at });
    await audit.record(trx, { ...systemContext(endpoint.workspace_id), trx }, {
      action: 'webhook_endpoint.disabled',
      target: { type: 'webhook_endpoint', id: endpoint.id },
      changes: { enabled: { before: true, after: false }, disabled_reason: { before: null, after: reason } },
    });
    log.warn({ workspace_id: endpoint.workspace_id, endpoint_id: endpoint.id, url: endpoint.url, reason }, reason === 'gone' ? 'webhook endpoint disabled: the receiver answered 410 Gone' : 'webhook endpoint disabled: its deliveries have failed for days');
  }

  // Records the attempt and moves the delivery on, in one transaction; the endpoint's failing state with it.
  async function record(delivery: WebhookDeliveryRow, endpoint: WebhookEndpointRow, result: AttemptResult, attemptedAt: Date): Promise<void> {
    const now = clock.now();
    const at = now.toISOString();
    const succeeded = result.status !== null && result.status >= 200 && result.status < 300;
    const gone = result.status === 410;
    const retryAt = succeeded || gone ? null : nextRetry(delivery, result, now);
    await inTransaction(db, {}, async (trx) => {
      const current = await lockedForUpdate(trx, trx.selectFrom('webhook_deliveries').select(['state', 'locked_until']).where('workspace_id', '=', delivery.workspace_id).where('id', '=', delivery.id)).executeTakeFirst();
      // Deleted with its endpoint, or taken over by another runner after this one outlived its lease.
      if (!current || current.state !== 'running' || current.locked_until !== delivery.locked_until) return;
      await webhookDeliveryRepository.insertAttempt(trx, {
        id: newId('webhookAttempt', attemptedAt.getTime()),
        workspace_id: delivery.workspace_id,
        delivery_id: delivery.id,
        attempted_at: attemptedAt.toISOString(),
        status_code: result.status,
        latency_ms: result.latencyMs,
        response_excerpt: result.excerpt,
        error: result.error?.slice(0, 1000) ?? (succeeded ? null : `the receiver answered ${result.status}`),
        next_retry_at: retryAt?.toISOString() ?? null,
      });
      await webhookDeliveryRepository.update(trx, delivery.workspace_id, delivery.id, {
        state: succeeded ? 'succeeded' : retryAt ? 'pending' : 'failed',
        run_after: retryAt?.toISOString() ?? delivery.run_after,
        locked_until: null,
        last_status: result.status,
        last_error: succeeded ? null : (result.error ?? `HTTP ${result.status}`).slice(0, 1000),
        updated_at: at,
      });
      const latest = await webhookEndpointRepository.find(trx, endpoint.workspace_id, endpoint.id, { forUpdate: true });
      if (!latest) return;
      if (succeeded) {
        if (latest.failing_since !== null) await webhookEndpointRepository.update(trx, endpoint.workspace_id, endpoint.id, { failing_since: null });
        return;
      }
      const failingSince = latest.failing_since ?? at;
      if (latest.failing_since === null) await webhookEndpointRepository.update(trx, endpoint.workspace_id, endpoint.id, { failing_since: failingSince });
      if (latest.enabled !== 1) return;
      if (gone) await disable(trx, endpoint, 'gone', at);
      else if (!retryAt && now.getTime() - Date.parse(failingSince) > DISABLE_AFTER_FAILING_MS) await disable(trx, endpoint, 'failing', at);
    });
    if (!succeeded) log.info({ delivery_id: delivery.id, endpoint_id: endpoint.id, status: result.status, error: result.error, next_retry_at: retryAt?.toISOString() ?? null }, 'webhook delivery failed');
  }

  async function handBack(delivery: WebhookDeliveryRow): Promise<void> {
    await webhookDeliveryRepository
      .update(db, delivery.workspace_id, delivery.id, { state: 'pending', locked_until: null, updated_at: clock.now().toISOString() })
      .catch((error: unknown) => log.warn({ err: error, delivery_id: delivery.id }, 'could not hand a webhook delivery back'));
  }

  return {
    kind: 'webhook',
    concurrency: config.concurrency,

    async claimNext() {
      const now = clock.now();
      return webhookDeliveryRepository.claimNext(db, now.toISOString(), new Date(now.getTime() + config.timeoutMs + leaseMs).toISOString());
    },

    release: handBack,

    async run(delivery, signal) {
      try {
        const endpoint = await webhookEndpointRepository.findForSigning(db, delivery.workspace_id, delivery.endpoint_id);
        if (!endpoint || endpoint.enabled !== 1) {
          // Disabled since it was queued: not sent (a resend after enabling it sends it).
          await webhookDeliveryRepository.update(db, delivery.workspace_id, delivery.id, { state: 'failed', locked_until: null, last_error: 'the endpoint is disabled', updated_at: clock.now().toISOString() });
          return;
        }
        const attemptedAt = clock.now();
        // Shutting down does not wait for a slow receiver: the delivery goes back to the queue (it may then arrive twice: at least once).
        const result = await Promise.race([attempt(delivery, endpoint, attemptedAt), shutdownOf(signal)]);
        if (result === null) return await handBack(delivery);
        await record(delivery, endpoint, result, attemptedAt);
      } catch (error) {
        log.error({ err: error, delivery_id: delivery.id }, 'webhook delivery could not be recorded; it is retried when its lease lapses');
      }
    },
  };
}
