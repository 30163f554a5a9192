import type { Selectable } from 'kysely';
import { afterKeyset } from '../../db/keyset.js';
import type { Db, MessagesTable } from '../../db/schema.js';
import type { PageRequest } from '../../http/pagination.js';

/** A message row as stored. */
export type MessageRow = Selectable<MessagesTable>;

/** A message with its visitor feedback (null columns when not rated). */
export type MessageWithFeedback = MessageRow & { feedback_rating: string | null; feedback_comment: string | null; feedback_updated_at: string | null };

/** Every column of a message (the runtime reads transcripts with the same set). */
export const MESSAGE_COLUMNS = ['id', 'workspace_id', 'conversation_id', 'chatbot_id', 'role', 'content', 'author_type', 'author_id', 'created_at', 'sources', 'outcome'] as const;
const QUALIFIED = MESSAGE_COLUMNS.map((column) => `messages.${column}` as const);

// Messages and their feedback: one left join on the feedback's primary key (the message id).
function withFeedback(db: Db, workspaceId: string) {
  return db
    .selectFrom('messages')
    .leftJoin('message_feedback', 'message_feedback.message_id', 'messages.id')
    .select([...QUALIFIED, 'message_feedback.rating as feedback_rating', 'message_feedback.comment as feedback_comment', 'message_feedback.updated_at as feedback_updated_at'])
    .where('messages.workspace_id', '=', workspaceId);
}

/** SQL for messages; every query carries the workspace id. */
export const messageRepository = {
  /** Stores a new message. */
  async insert(db: Db, row: MessageRow): Promise<void> {
    await db.insertInto('messages').values(row).execute();
  },

  /** One message of a workspace with its feedback. */
  async find(db: Db, workspaceId: string, id: string): Promise<MessageWithFeedback | undefined> {
    return withFeedback(db, workspaceId).where('messages.id', '=', id).executeTakeFirst();
  },

  /** One page of a conversation's messages with their feedback (limit + 1 rows). */
  async list(db: Db, workspaceId: string, conversationId: string, filter: { createdAfter?: string; createdBefore?: string }, page: PageRequest): Promise<MessageWithFeedback[]> {
    let query = withFeedback(db, workspaceId).where('messages.conversation_id', '=', conversationId);
    if (filter.createdAfter) query = query.where('messages.created_at', '>', filter.createdAfter);
    if (filter.createdBefore) query = query.where('messages.created_at', '<', filter.createdBefore);
    const keyset = afterKeyset(page, 'messages');
    if (keyset) query = query.where(keyset);
    return query.orderBy('messages.created_at', page.order).orderBy('messages.id', page.order).limit(page.limit + 1).execute();
  },
};
