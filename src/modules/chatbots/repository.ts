import type { Selectable, Updateable } from 'kysely';
import { lockedForUpdate } from '../../db/dialect.js';
import { precompiled } from '../../db/precompiled.js';
import { afterKeyset } from '../../db/keyset.js';
import type { ChatbotsTable, Db } from '../../db/schema.js';
import type { PageRequest } from '../../http/pagination.js';

/** A chatbot row as stored. */
export type ChatbotRow = Selectable<ChatbotsTable>;

/** Every column of an agent (the runtime reads agents by id alone with the same set). */
export const CHATBOT_COLUMNS = [
  'id',
  'workspace_id',
  'name',
  'description',
  'status',
  'instructions',
  'welcome_message',
  'model',
  'temperature',
  'knowledge',
  'lead_capture',
  'allowed_origins',
  'metadata',
  'created_at',
  'updated_at',
  'published_at',
  'suggested_questions',
  'language',
  'appearance',
  'translations',
] as const;
const COLUMNS = CHATBOT_COLUMNS;

/** Filters of the chatbot list. */
export interface ChatbotListFilter {
  status?: string;
  createdAfter?: string;
  createdBefore?: string;
}

// Reads by id are on most requests' path: built and compiled once.
const findById = precompiled((db, workspaceId: string, id: string) =>
  db.selectFrom('chatbots').select(COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id),
);

/** SQL for AI Agents; every query carries the workspace id. */
export const chatbotRepository = {
  /** Stores a new agent. */
  async insert(db: Db, row: ChatbotRow): Promise<void> {
    await db.insertInto('chatbots').values(row).execute();
  },

  /** One agent of a workspace; `forUpdate` locks its row for a read-modify-write. */
  async find(db: Db, workspaceId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<ChatbotRow | undefined> {
    if (!options.forUpdate) return findById(db, workspaceId, id);
    return lockedForUpdate(db, db.selectFrom('chatbots').select(COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id)).executeTakeFirst();
  },

  /** One page of a workspace's agents (limit + 1 rows, to tell whether more exist). */
  async list(db: Db, workspaceId: string, filter: ChatbotListFilter, page: PageRequest): Promise<ChatbotRow[]> {
    let query = db.selectFrom('chatbots').select(COLUMNS).where('workspace_id', '=', workspaceId);
    if (filter.status) query = query.where('status', '=', filter.status);
    if (filter.createdAfter) query = query.where('created_at', '>', filter.createdAfter);
    if (filter.createdBefore) query = query.where('created_at', '<', filter.createdBefore);
    const keyset = afterKeyset(page, 'chatbots');
    if (keyset) query = query.where(keyset);
    return query.orderBy('created_at', page.order).orderBy('id', page.order).limit(page.limit + 1).execute();
  },

  /** Applies changes to one agent of a workspace. */
  async update(db: Db, workspaceId: string, id: string, changes: Updateable<ChatbotsTable>): Promise<void> {
    await db.updateTable('chatbots').set(changes).where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
  },
};
