import type { Selectable } from 'kysely';
import { afterKeyset } from '../../db/keyset.js';
import type { Db, MessagesTable } from '../../db/schema.js';
import type { PageRequest } from '../../http/pagination.js';

/** A message row as stored. */
export type MessageRow = Selectable<MessagesTable>;

const COLUMNS = ['id', 'workspace_id', 'conversation_id', 'chatbot_id', 'role', 'content', 'author_type', 'author_id', 'created_at'] as const;

/** SQL for messages; every query carries the workspace id. */
export const messageRepository = {
  /** Stores a new message. */
  async insert(db: Db, row: MessageRow): Promise<void> {
    await db.insertInto('messages').values(row).execute();
  },

  /** One page of a conversation's messages (limit + 1 rows). */
  async list(db: Db, workspaceId: string, conversationId: string, filter: { createdAfter?: string; createdBefore?: string }, page: PageRequest): Promise<MessageRow[]> {
    let query = db
      .selectFrom('messages')
      .select(COLUMNS)
      .where('workspace_id', '=', workspaceId)
      .where('conversation_id', '=', conversationId);
    if (filter.createdAfter) query = query.where('created_at', '>', filter.createdAfter);
    if (filter.createdBefore) query = query.where('created_at', '<', filter.createdBefore);
    const keyset = afterKeyset(page, 'messages');
    if (keyset) query = query.where(keyset);
    return query.orderBy('created_at', page.order).orderBy('id', page.order).limit(page.limit + 1).execute();
  },
};
