import type { Selectable, Updateable } from 'kysely';
import { claimLocked, lockedForUpdate } from '../../db/dialect.js';
import { afterKeyset } from '../../db/keyset.js';
import type { Db, WebhookAttemptsTable, WebhookDeliveriesTable, WebhookEndpointsTable } from '../../db/schema.js';
import type { PageRequest } from '../../http/pagination.js';

/** An endpoint as stored, secrets included, encrypted (read only by the delivery runner and the rotation). */
export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
/** An endpoint without its secrets: what reads and lists select. */
export type WebhookEndpointInfo = Omit<WebhookEndpointRow, 'secret' | 'previous_secret'>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptsTable>;

// The secrets are never in a read's column set: a presenter cannot leak what was not selected.
const ENDPOINT_COLUMNS = [
  'id', 'workspace_id', 'url', 'description', 'events', 'enabled', 'disabled_reason', 'previous_secret_expires_at', 'failing_since', 'created_at', 'updated_at',
] as const;
const SIGNING_COLUMNS = [...ENDPOINT_COLUMNS, 'secret', 'previous_secret'] as const;
const DELIVERY_COLUMNS = [
  'id', 'workspace_id', 'endpoint_id', 'event_id', 'event_type', 'payload', 'state', 'attempts', 'run_after', 'locked_until', 'last_status', 'last_error', 'created_at', 'updated_at',
] as const;
const ATTEMPT_COLUMNS = ['id', 'workspace_id', 'delivery_id', 'attempted_at', 'status_code', 'latency_ms', 'response_excerpt', 'error', 'next_retry_at'] as const;

/** SQL for webhook endpoints; every query carries the workspace id. */
export const webhookEndpointRepository = {
  async insert(db: Db, row: WebhookEndpointRow): Promise<void> {
    await db.insertInto('webhook_endpoints').values(row).execute();
  },

  /** One endpoint, without secrets; `forUpdate` locks it for a read-modify-write. */
  async find(db: Db, workspaceId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<WebhookEndpointInfo | undefined> {
    const query = db.selectFrom('webhook_endpoints').select(ENDPOINT_COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id);
    return (options.forUpdate ? lockedForUpdate(db, query) : query).executeTakeFirst();
  },

  /** One endpoint with its secrets, for signing a delivery. */
  async findForSigning(db: Db, workspaceId: string, id: string): Promise<WebhookEndpointRow | undefined> {
    return db.selectFrom('webhook_endpoints').select(SIGNING_COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  },

  /** The enabled endpoints of a workspace (the event listener picks the subscribed ones). */
  async enabled(db: Db, workspaceId: string): Promise<Pick<WebhookEndpointRow, 'id' | 'events'>[]> {
    return db.selectFrom('webhook_endpoints').select(['id', 'events']).where('workspace_id', '=', workspaceId).where('enabled', '=', 1).execute();
  },

  /** One page of a workspace's endpoints, newest first (limit + 1 rows). */
  async list(db: Db, workspaceId: string, page: PageRequest): Promise<WebhookEndpointInfo[]> {
    let query = db.selectFrom('webhook_endpoints').select(ENDPOINT_COLUMNS).where('workspace_id', '=', workspaceId);
    const keyset = afterKeyset(page, 'webhook_endpoints');
    if (keyset) query = query.where(keyset);
    return query.orderBy('created_at', page.order).orderBy('id', page.order).limit(page.limit + 1).execute();
  },

  async update(db: Db, workspaceId: string, id: string, changes: Updateable<WebhookEndpointsTable>): Promise<void> {
    await db.updateTable('webhook_endpoints').set(changes).where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
  },

  /**
   * The endpoints of any workspace (a startup task) with a secret not starting with `sealedPrefix`: secrets an
   * older version stored in clear.
   */
  async withClearSecrets(db: Db, sealedPrefix: string): Promise<Pick<WebhookEndpointRow, 'id' | 'workspace_id' | 'secret' | 'previous_secret'>[]> {
    return db
      .selectFrom('webhook_endpoints')
      .select(['id', 'workspace_id', 'secret', 'previous_secret'])
      .where((eb) => eb.or([eb('secret', 'not like', `${sealedPrefix}%`), eb('previous_secret', 'not like', `${sealedPrefix}%`)]))
      .execute();
  },

  /**
   * Replaces an endpoint's stored secrets if they are still `expected` (compare and set: instances starting
   * at once do not overwrite each other, nor a rotation made in between). Returns whether it did.
   */
  async replaceSecrets(db: Db, expected: Pick<WebhookEndpointRow, 'id' | 'workspace_id' | 'secret' | 'previous_secret'>, next: Pick<WebhookEndpointRow, 'secret' | 'previous_secret'>): Promise<boolean> {
    let query = db.updateTable('webhook_endpoints').set(next).where('workspace_id', '=', expected.workspace_id).where('id', '=', expected.id).where('secret', '=', expected.secret);
    query = expected.previous_secret === null ? query.where('previous_secret', 'is', null) : query.where('previous_secret', '=', expected.previous_secret);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  },

  /** Removes an endpoint with its deliveries and their attempts. */
  async delete(db: Db, workspaceId: string, id: string): Promise<void> {
    const deliveries = db.selectFrom('webhook_deliveries').select('id').where('workspace_id', '=', workspaceId).where('endpoint_id', '=', id);
    await db.deleteFrom('webhook_attempts').where('workspace_id', '=', workspaceId).where('delivery_id', 'in', deliveries).execute();
    await db.deleteFrom('webhook_deliveries').where('workspace_id', '=', workspaceId).where('endpoint_id', '=', id).execute();
    await db.deleteFrom('webhook_endpoints').where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
  },
};

/** SQL for deliveries (the claimable queue) and their attempts. */
export const webhookDeliveryRepository = {
  async insert(db: Db, rows: WebhookDeliveryRow[]): Promise<void> {
    if (rows.length > 0) await db.insertInto('webhook_deliveries').values(rows).execute();
  },

  async find(db: Db, workspaceId: string, endpointId: string, id: string): Promise<WebhookDeliveryRow | undefined> {
    return db.selectFrom('webhook_deliveries').select(DELIVERY_COLUMNS).where('workspace_id', '=', workspaceId).where('endpoint_id', '=', endpointId).where('id', '=', id).executeTakeFirst();
  },

  /** One page of an endpoint's deliveries, newest first (limit + 1 rows). */
  async list(db: Db, workspaceId: string, endpointId: string, filter: { states?: string[] }, page: PageRequest): Promise<WebhookDeliveryRow[]> {
    let query = db.selectFrom('webhook_deliveries').select(DELIVERY_COLUMNS).where('workspace_id', '=', workspaceId).where('endpoint_id', '=', endpointId);
    if (filter.states) query = query.where('state', 'in', filter.states as WebhookDeliveryRow['state'][]);
    const keyset = afterKeyset(page, 'webhook_deliveries');
    if (keyset) query = query.where(keyset);
    return query.orderBy('created_at', page.order).orderBy('id', page.order).limit(page.limit + 1).execute();
  },

  /** The attempts of some deliveries, oldest first. */
  async attempts(db: Db, workspaceId: string, deliveryIds: string[]): Promise<WebhookAttemptRow[]> {
    if (deliveryIds.length === 0) return [];
    return db
      .selectFrom('webhook_attempts')
      .select(ATTEMPT_COLUMNS)
      .where('workspace_id', '=', workspaceId)
      .where('delivery_id', 'in', deliveryIds)
      .orderBy('attempted_at')
      .orderBy('id')
      .execute();
  },

  /**
   * Claims the next due delivery of any workspace: one whose lease lapsed (its runner died) first, else the
   * pending one due the longest. Two index lookups, each read in (state, run_after) order, in one conditional
   * UPDATE (one OR over both states would sort every pending row at each claim); on PostgreSQL the inner
   * SELECTs skip rows others are claiming.
   */
  async claimNext(db: Db, now: string, lockedUntil: string): Promise<WebhookDeliveryRow | undefined> {
    const lapsed = claimLocked(db, db.selectFrom('webhook_deliveries').select('id').where('state', '=', 'running').where('locked_until', '<', now).limit(1));
    const due = claimLocked(db, db.selectFrom('webhook_deliveries').select('id').where('state', '=', 'pending').where('run_after', '<=', now).orderBy('run_after').limit(1));
    return db
      .updateTable('webhook_deliveries')
      .set((eb) => ({ state: 'running', locked_until: lockedUntil, attempts: eb('attempts', '+', 1), updated_at: now }))
      .where('id', '=', (eb) => eb.fn.coalesce(lapsed, due))
      .where((eb) => eb.or([eb('state', '=', 'pending'), eb.and([eb('state', '=', 'running'), eb('locked_until', '<', now)])]))
      .returning(DELIVERY_COLUMNS)
      .executeTakeFirst();
  },

  /** Moves a delivery on: succeeded, failed, or pending again (a retry, a resend, handed back on shutdown). */
  async update(db: Db, workspaceId: string, id: string, changes: Updateable<WebhookDeliveriesTable>): Promise<void> {
    await db.updateTable('webhook_deliveries').set(changes).where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
  },

  /**
   * Deletes up to `limit` succeeded or failed deliveries last changed before `cutoff`, of any workspace (a
   * system sweep), with their attempts; pending and running ones are never touched. Run it in a
   * transaction: the deliveries are locked first (SKIP LOCKED on PostgreSQL, so instances sweeping at once
   * split them, and a resend of one waits and then finds it gone), then their attempts and they are
   * deleted. `run_after < cutoff` is implied (a finished delivery keeps the run_after it was claimed at)
   * and lets the claim index (state, run_after) find the old rows without reading the recent ones.
   */
  async deleteFinishedBefore(trx: Db, cutoff: string, limit: number): Promise<{ deliveries: number; attempts: number }> {
    const old = await claimLocked(
      trx,
      trx
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('state', 'in', ['succeeded', 'failed'])
        .where('run_after', '<', cutoff)
        .where('updated_at', '<', cutoff)
        .limit(limit),
    ).execute();
    const ids = old.map((row) => row.id);
    if (ids.length === 0) return { deliveries: 0, attempts: 0 };
    const attempts = await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).executeTakeFirst();
    const deliveries = await trx.deleteFrom('webhook_deliveries').where('id', 'in', ids).executeTakeFirst();
    return { deliveries: Number(deliveries.numDeletedRows), attempts: Number(attempts.numDeletedRows) };
  },

  async insertAttempt(db: Db, row: WebhookAttemptRow): Promise<void> {
    await db.insertInto('webhook_attempts').values(row).execute();
  },
};
