import type { Selectable, Updateable } from 'kysely';
import { lockedForUpdate } from '../../db/dialect.js';
import { precompiled } from '../../db/precompiled.js';
import { afterKeyset } from '../../db/keyset.js';
import type { ConversationsTable, Db } from '../../db/schema.js';
import type { PageRequest } from '../../http/pagination.js';

/** A conversation row as stored. */
export type ConversationRow = Selectable<ConversationsTable>;

const COLUMNS = [
  'id',
  'workspace_id',
  'chatbot_id',
  'status',
  'mode',
  'channel',
  'visitor_id',
  'visitor_name',
  'visitor_email',
  'lead_id',
  'message_count',
  'last_message_at',
  'metadata',
  'created_at',
  'updated_at',
  'handoff_requested_at',
] as const;

/** Filters of the conversation list. */
export interface ConversationListFilter {
  chatbotId?: string;
  status?: string;
  channel?: string;
  /** Waiting for a person: a handoff was requested, and the conversation is open and still in agent mode. */
  handoff?: 'requested';
  createdAfter?: string;
  createdBefore?: string;
}

// Reads by id are on most requests' path: built and compiled once.
const findById = precompiled((db, workspaceId: string, id: string) =>
  db.selectFrom('conversations').select(COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id),
);

/** SQL for conversations; every query carries the workspace id. */
export const conversationRepository = {
  /** Stores a new conversation. */
  async insert(db: Db, row: ConversationRow): Promise<void> {
    await db.insertInto('conversations').values(row).execute();
  },

  /** One conversation of a workspace; `forUpdate` locks its row for a read-modify-write. */
  async find(db: Db, workspaceId: string, id: string, options: { forUpdate?: boolean } = {}): Promise<ConversationRow | undefined> {
    if (!options.forUpdate) return findById(db, workspaceId, id);
    return lockedForUpdate(db, db.selectFrom('conversations').select(COLUMNS).where('workspace_id', '=', workspaceId).where('id', '=', id)).executeTakeFirst();
  },

  /** One page of a workspace's conversations (limit + 1 rows). */
  async list(db: Db, workspaceId: string, filter: ConversationListFilter, page: PageRequest): Promise<ConversationRow[]> {
    let query = db.selectFrom('conversations').select(COLUMNS).where('workspace_id', '=', workspaceId);
    if (filter.chatbotId) query = query.where('chatbot_id', '=', filter.chatbotId);
    if (filter.status) query = query.where('status', '=', filter.status);
    if (filter.channel) query = query.where('channel', '=', filter.channel);
    if (filter.handoff === 'requested') query = query.where('handoff_requested_at', 'is not', null).where('mode', '=', 'agent').where('status', '=', 'open');
    if (filter.createdAfter) query = query.where('created_at', '>', filter.createdAfter);
    if (filter.createdBefore) query = query.where('created_at', '<', filter.createdBefore);
    const keyset = afterKeyset(page, 'conversations');
    if (keyset) query = query.where(keyset);
    return query.orderBy('created_at', page.order).orderBy('id', page.order).limit(page.limit + 1).execute();
  },

  /** Applies changes to one conversation of a workspace. */
  async update(db: Db, workspaceId: string, id: string, changes: Updateable<ConversationsTable>): Promise<void> {
    await db.updateTable('conversations').set(changes).where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
  },
};
