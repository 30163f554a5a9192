import type { Selectable } from 'kysely';
import type { PageRequest } from '../../http/pagination.js';
import type { Db, EventsTable } from '../../db/schema.js';

export type EventRow = Selectable<EventsTable>;

/** Filters of the event list. */
export interface EventListFilter {
  types?: readonly string[];
  createdAfter?: string;
}

/** SQL for the domain event log; every query carries the workspace id. */
export const eventRepository = {
  /**
   * Claims the workspace's next event number. The update locks the workspace row until the transaction
   * ends, so the events of a workspace commit in the order of their numbers.
   */
  async claimSeq(db: Db, workspaceId: string): Promise<number> {
    const row = await db
      .updateTable('workspaces')
      .set((eb) => ({ event_seq: eb('event_seq', '+', 1) }))
      .where('id', '=', workspaceId)
      .returning('event_seq')
      .executeTakeFirst();
    if (!row) throw new Error(`events: workspace ${workspaceId} does not exist`);
    return Number(row.event_seq);
  },

  /** The number of the workspace's latest event (0 before the first). */
  async head(db: Db, workspaceId: string): Promise<number> {
    const row = await db.selectFrom('workspaces').select('event_seq').where('id', '=', workspaceId).executeTakeFirst();
    return Number(row?.event_seq ?? 0);
  },

  /** Up to `limit` of the workspace's events numbered after `seq`, in order. */
  async after(db: Db, workspaceId: string, seq: number, limit: number): Promise<EventRow[]> {
    return db.selectFrom('events').selectAll().where('workspace_id', '=', workspaceId).where('seq', '>', seq).orderBy('seq', 'asc').limit(limit).execute();
  },

  async insert(db: Db, row: EventRow): Promise<void> {
    await db.insertInto('events').values(row).execute();
  },

  /**
   * A page of events, oldest first: in the workspace's commit order (`seq`), after the event the cursor
   * names. `limit + 1` rows (toPage tells from the extra one whether more exist).
   */
  async list(db: Db, workspaceId: string, filter: EventListFilter, page: PageRequest): Promise<EventRow[]> {
    let query = db.selectFrom('events').selectAll().where('workspace_id', '=', workspaceId);
    if (filter.types?.length) query = query.where('type', 'in', [...filter.types]);
    if (filter.createdAfter) query = query.where('created_at', '>', filter.createdAfter);
    if (page.after) {
      const lastId = page.after.id;
      query = query.where('seq', '>', (eb) =>
        eb.selectFrom('events').select('seq').where('workspace_id', '=', workspaceId).where('id', '=', lastId),
      );
    }
    return query.orderBy('seq', 'asc').limit(page.limit + 1).execute();
  },
};
