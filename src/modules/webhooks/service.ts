import type { Kysely } from 'kysely';
import { ConfigError } from '../../config.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError } from '../../http/errors.js';
import { pageRequest, toPage, type Page } from '../../http/pagination.js';
import type { OperationContext } from '../../lib/actor.js';
import type { Clock } from '../../lib/clock.js';
import { isId, newId } from '../../lib/ids.js';
import { addressRefusal } from '../../lib/outbound-fetch.js';
import { etagOf, ifMatchSatisfied, nextUpdatedAt } from '../../lib/versioning.js';
import { diffChanges, type AuditWriter } from '../audit/writer.js';
import { presentDelivery, presentEndpoint } from './presenter.js';
import { deliveryOf } from './queue.js';
import { webhookDeliveryRepository, webhookEndpointRepository, type WebhookDeliveryRow, type WebhookEndpointInfo } from './repository.js';
import { TEST_EVENT_TYPE, type CreateWebhookEndpointInput, type ListDeliveriesFilters, type ListWebhookEndpointsFilters, type UpdateWebhookEndpointInput, type WebhookDeliveryView, type WebhookEndpointView } from './schema.js';
import { ENCRYPTED_PREFIX } from '../provider-settings/crypto.js';
import type { WebhookSecrets } from './secrets.js';
import { newSecret } from './signature.js';

/** How long the secret before a rotation keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3600_000;
const AUDITED_FIELDS = ['url', 'events', 'description', 'enabled', 'disabled_reason'] as const;

/** An endpoint with its ETag. */
export interface VersionedEndpoint {
  endpoint: WebhookEndpointView;
  etag: string;
}

/** What the service checks receiver URLs with (OUTBOUND_ALLOW_PRIVATE_HOSTS, a DNS deadline). */
export interface WebhookUrlPolicy {
  allowPrivateHosts: boolean;
  timeoutMs: number;
}

function versioned(row: WebhookEndpointInfo, secret?: string): VersionedEndpoint {
  return { endpoint: presentEndpoint(row, secret), etag: etagOf(row.id, row.updated_at) };
}

/**
 * Refuses a URL with credentials, or one whose host is (or resolves to) a private address unless allowed.
 * Checked again at each delivery (DNS may change in between).
 */
async function checkUrl(raw: string, policy: WebhookUrlPolicy): Promise<void> {
  const url = new URL(raw);
  if (url.username || url.password) throw AppError.validation('The URL must not carry credentials.', [{ pointer: '/url', message: 'must not contain a user name or password' }]);
  const refusal = await addressRefusal(raw, { allowPrivateHosts: policy.allowPrivateHosts, timeoutMs: Math.min(policy.timeoutMs, 5000) });
  if (refusal) throw AppError.validation(`The URL cannot receive webhooks: ${refusal}.`, [{ pointer: '/url', message: refusal }]);
}

/**
 * Webhook endpoints of a workspace, their secrets (stored encrypted: ./secrets.ts), and their delivery log
 * (deliveries are sent by ./delivery.ts).
 */
export function createWebhookService(db: Kysely<Database>, clock: Clock, audit: AuditWriter, policy: WebhookUrlPolicy, secrets: WebhookSecrets, wake: () => void = () => undefined) {
  async function load(ctx: OperationContext, id: string, executor = ctx.trx ?? db, forUpdate = false): Promise<WebhookEndpointInfo> {
    const row = isId('webhookEndpoint', id) ? await webhookEndpointRepository.find(executor, ctx.actor.workspaceId, id, { forUpdate }) : undefined;
    if (!row) throw AppError.notFound('webhook endpoint', id);
    return row;
  }

  async function withAttempts(workspaceId: string, rows: WebhookDeliveryRow[]): Promise<Map<string, WebhookDeliveryView>> {
    const attempts = await webhookDeliveryRepository.attempts(db, workspaceId, rows.map((row) => row.id));
    return new Map(rows.map((row) => [row.id, presentDelivery(row, attempts.filter((attempt) => attempt.delivery_id === row.id))]));
  }

  return {
    /** Creates an endpoint; the answer carries its secret, shown this once. */
    async create(ctx: OperationContext, input: CreateWebhookEndpointInput): Promise<VersionedEndpoint> {
      await checkUrl(input.url, policy);
      return inTransaction(db, ctx, async (trx) => {
        const now = clock.now();
        const at = now.toISOString();
        const id = newId('webhookEndpoint', now.getTime());
        const secret = newSecret();
        const row = {
          id,
          workspace_id: ctx.actor.workspaceId,
          url: input.url,
          description: input.description ?? null,
          events: JSON.stringify(input.events.includes('*') ? ['*'] : input.events),
          enabled: 1,
          disabled_reason: null,
          secret: secrets.seal(id, secret),
          previous_secret: null,
          previous_secret_expires_at: null,
          failing_since: null,
          created_at: at,
          updated_at: at,
        };
        await webhookEndpointRepository.insert(trx, row);
        const result = versioned(row, secret);
        await audit.record(trx, ctx, { action: 'webhook_endpoint.created', target: { type: 'webhook_endpoint', id: row.id }, changes: diffChanges(null, result.endpoint, AUDITED_FIELDS) });
        return result;
      });
    },

    /** One endpoint (without its secret). */
    async get(ctx: OperationContext, id: string): Promise<VersionedEndpoint> {
      return versioned(await load(ctx, id));
    },

    /** A page of the workspace's endpoints, newest first. */
    async list(ctx: OperationContext, query: ListWebhookEndpointsFilters): Promise<Page<WebhookEndpointView>> {
      const filters = { list: 'webhook_endpoints' };
      const page = pageRequest(query, filters);
      const rows = await webhookEndpointRepository.list(db, ctx.actor.workspaceId, page);
      return toPage(rows, page, filters, (row) => presentEndpoint(row));
    },

    /** Changes url, events, description or enabled; enabling clears why the service had disabled it. */
    async update(ctx: OperationContext, id: string, input: UpdateWebhookEndpointInput, ifMatch?: string): Promise<VersionedEndpoint> {
      if (input.url !== undefined) await checkUrl(input.url, policy);
      return inTransaction(db, ctx, async (trx) => {
        const current = await load(ctx, id, trx, true);
        if (!ifMatchSatisfied(ifMatch, etagOf(current.id, current.updated_at))) {
          throw new AppError('precondition_failed', 'The webhook endpoint has changed since you read it: fetch it again and retry with its new ETag.');
        }
        const next: WebhookEndpointInfo = { ...current };
        if (input.url !== undefined) next.url = input.url;
        if (input.events !== undefined) next.events = JSON.stringify(input.events.includes('*') ? ['*'] : input.events);
        if (input.description !== undefined) next.description = input.description;
        if (input.enabled !== undefined) {
          next.enabled = input.enabled ? 1 : 0;
          // A person's choice: no service reason, and a re-enabled endpoint starts with a clean record.
          if (input.enabled !== (current.enabled === 1)) next.disabled_reason = null;
          if (input.enabled && current.enabled !== 1) next.failing_since = null;
        }
        const changed = (Object.keys(next) as (keyof WebhookEndpointInfo)[]).filter((key) => next[key] !== current[key]);
        if (changed.length === 0) return versioned(current);
        next.updated_at = nextUpdatedAt(current.updated_at, clock.now());
        const changes = Object.fromEntries([...changed, 'updated_at'].map((key) => [key, next[key as keyof WebhookEndpointInfo]]));
        await webhookEndpointRepository.update(trx, ctx.actor.workspaceId, id, changes);
        const result = versioned(next);
        await audit.record(trx, ctx, { action: 'webhook_endpoint.updated', target: { type: 'webhook_endpoint', id }, changes: diffChanges(presentEndpoint(current), result.endpoint, AUDITED_FIELDS) });
        return result;
      });
    },

    /** Deletes an endpoint with its delivery log; deliveries not yet sent are dropped. */
    async remove(ctx: OperationContext, id: string): Promise<void> {
      await inTransaction(db, ctx, async (trx) => {
        const current = await load(ctx, id, trx, true);
        await webhookEndpointRepository.delete(trx, ctx.actor.workspaceId, id);
        await audit.record(trx, ctx, { action: 'webhook_endpoint.deleted', target: { type: 'webhook_endpoint', id }, changes: { url: { before: current.url, after: null } } });
      });
    },

    /** A new secret, shown once; the previous one keeps signing beside it for 24 hours. */
    async rotateSecret(ctx: OperationContext, id: string): Promise<VersionedEndpoint> {
      return inTransaction(db, ctx, async (trx) => {
        const current = await load(ctx, id, trx, true);
        const signing = await webhookEndpointRepository.findForSigning(trx, ctx.actor.workspaceId, id);
        const now = clock.now();
        const secret = newSecret();
        const next: WebhookEndpointInfo = { ...current, previous_secret_expires_at: new Date(now.getTime() + ROTATION_OVERLAP_MS).toISOString(), updated_at: nextUpdatedAt(current.updated_at, now) };
        await webhookEndpointRepository.update(trx, ctx.actor.workspaceId, id, {
          secret: secrets.seal(id, secret),
          // Moved as stored (both columns share the endpoint's encryption context).
          previous_secret: secrets.reseal(id, signing!.secret),
          previous_secret_expires_at: next.previous_secret_expires_at,
          updated_at: next.updated_at,
        });
        await audit.record(trx, ctx, {
          action: 'webhook_endpoint.secret_rotated',
          target: { type: 'webhook_endpoint', id },
          changes: { previous_secret_expires_at: { before: current.previous_secret_expires_at, after: next.previous_secret_expires_at } },
        });
        return versioned(next, secret);
      });
    },

    /**
     * Encrypts the secrets an older version stored in clear, in every workspace; run at startup, before
     * anything is served. Idempotent: encrypted values are left alone, and each row is replaced only if it
     * still holds what was read (instances starting at once). Returns how many endpoints it encrypted.
     * Refuses to start (ConfigError) when such secrets exist and there is no key to encrypt them with.
     */
    async encryptClearSecrets(): Promise<number> {
      const rows = await webhookEndpointRepository.withClearSecrets(db, ENCRYPTED_PREFIX);
      if (rows.length === 0) return 0;
      if (!secrets.canStore) {
        throw new ConfigError(
          `${rows.length} webhook endpoint(s) have signing secrets stored in clear by an earlier version, and this server has no key to encrypt them: set SECRET_KEY (the same on every instance; e.g. \`openssl rand -base64 32\`) and start again`,
        );
      }
      let encrypted = 0;
      for (const row of rows) {
        const next = { secret: secrets.reseal(row.id, row.secret), previous_secret: row.previous_secret === null ? null : secrets.reseal(row.id, row.previous_secret) };
        if (await webhookEndpointRepository.replaceSecrets(db, row, next)) encrypted++;
      }
      return encrypted;
    },

    /** A page of the endpoint's deliveries, newest first, each with its attempts. */
    async deliveries(ctx: OperationContext, id: string, query: ListDeliveriesFilters): Promise<Page<WebhookDeliveryView>> {
      await load(ctx, id);
      const filters = { list: 'webhook_deliveries', endpoint: id, status: query.status };
      const page = pageRequest(query, filters);
      const states = query.status === 'pending' ? ['pending', 'running'] : query.status ? [query.status] : undefined;
      const rows = await webhookDeliveryRepository.list(db, ctx.actor.workspaceId, id, { states }, page);
      const views = await withAttempts(ctx.actor.workspaceId, rows.slice(0, page.limit));
      return toPage(rows, page, filters, (row) => views.get(row.id) ?? presentDelivery(row, []));
    },

    /** Queues a `webhook.test` event for this endpoint only. */
    async test(ctx: OperationContext, id: string): Promise<WebhookDeliveryView> {
      const delivery = await inTransaction(db, ctx, async (trx) => {
        const endpoint = await load(ctx, id, trx, true);
        if (endpoint.enabled !== 1) throw new AppError('invalid_status_transition', 'The endpoint is disabled: enable it before sending a test event.');
        const now = clock.now();
        const event = { id: newId('event', now.getTime()), workspace_id: ctx.actor.workspaceId, type: TEST_EVENT_TYPE, created_at: now.toISOString(), data: { endpoint_id: id, message: 'A test event sent from the API or the dashboard.' } };
        const row = deliveryOf(event, id, now);
        await webhookDeliveryRepository.insert(trx, [row]);
        await audit.record(trx, ctx, { action: 'webhook_endpoint.test_sent', target: { type: 'webhook_endpoint', id }, changes: { delivery_id: { before: null, after: row.id } } });
        return presentDelivery(row, []);
      });
      wake();
      return delivery;
    },

    /** Sends a delivery again, with the same `webhook-id`, as soon as a runner takes it (a new round of retries). */
    async resend(ctx: OperationContext, id: string, deliveryId: string): Promise<WebhookDeliveryView> {
      const view = await inTransaction(db, ctx, async (trx) => {
        const endpoint = await load(ctx, id, trx, true);
        const row = isId('webhookDelivery', deliveryId) ? await webhookDeliveryRepository.find(trx, ctx.actor.workspaceId, id, deliveryId) : undefined;
        if (!row) throw AppError.notFound('webhook delivery', deliveryId);
        if (endpoint.enabled !== 1) throw new AppError('invalid_status_transition', 'The endpoint is disabled: enable it before resending.');
        // Being sent right now: that attempt is the resend.
        if (row.state === 'running') return presentDelivery(row, []);
        const at = clock.now().toISOString();
        const next: WebhookDeliveryRow = { ...row, state: 'pending', attempts: 0, run_after: at, locked_until: null, updated_at: at };
        await webhookDeliveryRepository.update(trx, ctx.actor.workspaceId, row.id, { state: next.state, attempts: 0, run_after: at, locked_until: null, updated_at: at });
        await audit.record(trx, ctx, { action: 'webhook_delivery.resent', target: { type: 'webhook_delivery', id: row.id }, changes: { status: { before: row.state, after: 'pending' } } });
        return presentDelivery(next, []);
      });
      wake();
      return view;
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;
