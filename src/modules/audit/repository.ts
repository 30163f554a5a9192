import { precompiledInsert, precompiledWrite } from '../../db/precompiled.js';
import type { AuditEventsTable, Db } from '../../db/schema.js';

// The chain step runs with every write: its statements are built and compiled once.
const claimNextSeq = precompiledWrite((db, workspaceId: string) =>
  db
    .updateTable('workspaces')
    .set((eb) => ({ audit_seq: eb('audit_seq', '+', 1) }))
    .where('id', '=', workspaceId)
    .returning(['audit_seq', 'audit_head']),
);
const updateHead = precompiledWrite((db, workspaceId: string, hash: string) =>
  db.updateTable('workspaces').set({ audit_head: hash }).where('id', '=', workspaceId),
);
const insertEvent = precompiledInsert('audit_events');

/** Filters of the dashboard's audit log. */
export interface AuditFilter {
  /** An actor id or name (e.g. a user's email or a key id). */
  actor?: string;
  action?: string;
  occurredAfter?: string;
  occurredBefore?: string;
  beforeSeq?: number;
}

/** SQL for the audit log: append, read in order, and the chain head on the workspace row. */
export const auditRepository = {
  /**
   * Reads the chain head of a workspace and claims the next sequence number in one statement, so two
   * writers can never both extend the same head (on PostgreSQL the row lock serializes them).
   */
  async advanceHead(db: Db, workspaceId: string): Promise<{ seq: number; head: string } | undefined> {
    const [row] = (await claimNextSeq(db, workspaceId)).rows;
    return row ? { seq: Number(row.audit_seq), head: row.audit_head } : undefined;
  },

  /** Stores the new head hash after an append. */
  async setHead(db: Db, workspaceId: string, hash: string): Promise<void> {
    await updateHead(db, workspaceId, hash);
  },

  /** Appends one event. */
  async insert(db: Db, event: AuditEventsTable): Promise<void> {
    await insertEvent(db, event);
  },

  /** The chain head as recorded on the workspace. */
  async head(db: Db, workspaceId: string): Promise<{ seq: number; hash: string } | undefined> {
    const row = await db.selectFrom('workspaces').select(['audit_seq', 'audit_head']).where('id', '=', workspaceId).executeTakeFirst();
    return row ? { seq: Number(row.audit_seq), hash: row.audit_head } : undefined;
  },

  /** The id and hash of the event at `seq` of a workspace's chain. */
  async atSeq(db: Db, workspaceId: string, seq: number): Promise<{ id: string; hash: string } | undefined> {
    return db.selectFrom('audit_events').select(['id', 'hash']).where('workspace_id', '=', workspaceId).where('seq', '=', seq).executeTakeFirst();
  },

  /** Events of a workspace in chain order (oldest first), in batches for long chains. */
  async inOrder(db: Db, workspaceId: string, afterSeq: number, limit: number): Promise<AuditEventsTable[]> {
    return db
      .selectFrom('audit_events')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .where('seq', '>', afterSeq)
      .orderBy('seq', 'asc')
      .limit(limit)
      .execute();
  },

  /** Events of a workspace matching the filters, newest first, before a sequence number (paging). */
  async search(db: Db, workspaceId: string, filter: AuditFilter, limit: number): Promise<AuditEventsTable[]> {
    let query = db.selectFrom('audit_events').selectAll().where('workspace_id', '=', workspaceId);
    if (filter.actor) {
      const actor = filter.actor;
      query = query.where((eb) => eb.or([eb('actor_id', '=', actor), eb('actor_name', '=', actor)]));
    }
    if (filter.action) query = query.where('action', '=', filter.action);
    if (filter.occurredAfter) query = query.where('occurred_at', '>=', filter.occurredAfter);
    if (filter.occurredBefore) query = query.where('occurred_at', '<', filter.occurredBefore);
    if (filter.beforeSeq !== undefined) query = query.where('seq', '<', filter.beforeSeq);
    return query.orderBy('seq', 'desc').limit(limit).execute();
  },

  /** The newest events of a workspace, newest first. */
  async newest(db: Db, workspaceId: string, limit: number): Promise<AuditEventsTable[]> {
    return db.selectFrom('audit_events').selectAll().where('workspace_id', '=', workspaceId).orderBy('seq', 'desc').limit(limit).execute();
  },
};
