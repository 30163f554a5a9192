import { sql, type Selectable, type Updateable } from 'kysely';
import { lockedForUpdate } from '../../db/dialect.js';
import { precompiled, precompiledInsert } from '../../db/precompiled.js';
import { afterKeyset } from '../../db/keyset.js';
import type { Db, LeadsTable } from '../../db/schema.js';
import type { PageRequest } from '../../http/pagination.js';

/** A lead row as stored. */
export type LeadRow = Selectable<LeadsTable>;

const COLUMNS = [
  'id',
  'workspace_id',
  'chatbot_id',
  'conversation_id',
  'name',
  'email',
  'phone',
  'company',
  'status',
  'source',
  'custom_fields',
  'created_at',
  'updated_at',
] as const;

/** Filters of the lead list. */
export interface LeadListFilter {
  chatbotId?: string;
  conversationId?: string;
  status?: string;
  email?: string;
  createdAfter?: string;
  createdBefore?: string;
  updatedAfter?: string;
  /** Substring of name, email, company or phone (dashboard search). */
  search?: string;
}

// Reads by id are on most requests' path: built and compiled once.
const findById = precompiled((db, workspaceId: string, id: string) =>
  db.selectFrom('leads').select(COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id),
);

const insertRow = precompiledInsert('leads');

/** SQL for leads; every query carries the workspace id. */
export const leadRepository = {
  /** Stores a new lead. */
  async insert(db: Db, row: LeadRow): Promise<void> {
    await insertRow(db, row);
  },

  /** One lead of a workspace; `forUpdate` locks its row for a read-modify-write. */
  async find(db: Db, workspaceId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<LeadRow | undefined> {
    if (!options.forUpdate) return findById(db, workspaceId, id);
    return lockedForUpdate(db, db.selectFrom('leads').select(COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id)).executeTakeFirst();
  },

  /** One page of a workspace's leads (limit + 1 rows). */
  async list(db: Db, workspaceId: string, filter: LeadListFilter, page: PageRequest): Promise<LeadRow[]> {
    let query = db.selectFrom('leads').select(COLUMNS).where('workspace_id', '=', workspaceId);
    if (filter.chatbotId) query = query.where('chatbot_id', '=', filter.chatbotId);
    if (filter.conversationId) query = query.where('conversation_id', '=', filter.conversationId);
    if (filter.status) query = query.where('status', '=', filter.status);
    if (filter.email) query = query.where('email', '=', filter.email);
    if (filter.search) {
      // Case-insensitive substring match on the contact fields (the dashboard's search box).
      const pattern = `%${filter.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      query = query.where((eb) =>
        eb.or(['name', 'email', 'company', 'phone'].map((column) => eb(sql`lower(${sql.ref(column)})`, 'like', sql`${pattern} escape '\\'`))),
      );
    }
    if (filter.createdAfter) query = query.where('created_at', '>', filter.createdAfter);
    if (filter.createdBefore) query = query.where('created_at', '<', filter.createdBefore);
    if (filter.updatedAfter) query = query.where('updated_at', '>', filter.updatedAfter);
    const keyset = afterKeyset(page, 'leads');
    if (keyset) query = query.where(keyset);
    return query.orderBy('created_at', page.order).orderBy('id', page.order).limit(page.limit + 1).execute();
  },

  /** Applies changes to one lead of a workspace. */
  async update(db: Db, workspaceId: string, id: string, changes: Updateable<LeadsTable>): Promise<void> {
    await db.updateTable('leads').set(changes).where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
  },
};
