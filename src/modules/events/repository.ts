import type { Selectable } from 'kysely';
import type { PageRequest } from '../../http/pagination.js';
import type { Db, EventsTable } from '../../db/schema.js';

export type EventRow = Selectable<EventsTable>;

/** Every column of an event row, named (the list and the live streams read all of them). */
const EVENT_COLUMNS = ['id', 'workspace_id', 'seq', 'type', 'created_at', 'data', 'conversation_id'] as const;

/** Which events `after` reads: numbered after `after` (and up to `upTo`), of one conversation when given. */
export interface EventRange {
  after: number;
  upTo?: number;
  conversationId?: string;
}

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

  /**
   * Up to `limit` of the workspace's events in `range`, in order. With a conversation, only its events, read
   * through (workspace_id, conversation_id, seq): a visitor's replay costs its own events, not the workspace's.
   */
  async after(db: Db, workspaceId: string, range: EventRange, limit: number): Promise<EventRow[]> {
    let query = db.selectFrom('events').select(EVENT_COLUMNS).where('workspace_id', '=', workspaceId);
    if (range.conversationId !== undefined) query = query.where('conversation_id', '=', range.conversationId);
    query = query.where('seq', '>', range.after);
    if (range.upTo !== undefined) query = query.where('seq', '<=', range.upTo);
    return query.orderBy('seq', 'asc').limit(limit).execute();
  },

  async insert(db: Db, row: EventRow): Promise<void> {
    await db.insertInto('events').values(row).execute();
  },

  /**
   * A page of events, oldest first: in the workspace's commit order (`seq`), after the event the cursor
   * names. `limit + 1` rows (toPage tells from the extra one whether more exist).
   */
  async list(db: Db, workspaceId: string, filter: EventListFilter, page: PageRequest): Promise<EventRow[]> {
    let query = db.selectFrom('events').select(EVENT_COLUMNS).where('workspace_id', '=', workspaceId);
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
